/// Waits, on the main actor, until `condition` holds or ten seconds pass: for a closure on the
/// main actor that gets a change on the actor's next turn. The caller checks `condition` after.
@MainActor
func settle(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition(), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}
