// swift-tools-version: 6.0
// ObserverGraph: a dependency-free observer kit. This manifest must never declare a package
// dependency; benchmarks against peers live in their own package under Benchmarks/.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Checks the kit's internal invariants after every mutation (debug builds only).
    .define("OBSERVERGRAPH_INTERNAL_CHECKS", .when(configuration: .debug)),
]

let package = Package(
    name: "ObserverGraph",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "ObserverGraph", targets: ["ObserverGraph"]),
        // Recording observers, a virtual step clock, a test Clock and marble diagrams, for tests and demos.
        .library(name: "ObserverGraphTesting", targets: ["ObserverGraphTesting"]),
        // The reference app: the daily queue manager of the source documents.
        .library(name: "DailyQueue", targets: ["DailyQueue"]),
        .executable(name: "daily-queue", targets: ["daily-queue"]),
    ],
    targets: [
        .target(name: "ObserverGraph", swiftSettings: strictSettings),
        .target(
            name: "ObserverGraphTesting",
            dependencies: ["ObserverGraph"],
            swiftSettings: strictSettings
        ),
        .target(name: "DailyQueue", dependencies: ["ObserverGraph"], swiftSettings: strictSettings),
        .executableTarget(
            name: "daily-queue",
            dependencies: ["DailyQueue", "ObserverGraph", "ObserverGraphTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ObserverGraphTests",
            // The testing product's `TestClock` drives the time operators' race tests.
            dependencies: ["ObserverGraph", "ObserverGraphTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ObserverGraphTestingTests",
            dependencies: ["ObserverGraphTesting", "ObserverGraph"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DailyQueueTests",
            // The command-line tests run the built `daily-queue`; depending on it builds it first.
            dependencies: ["DailyQueue", "ObserverGraph", "ObserverGraphTesting", "daily-queue"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
