import ObserverGraph
import Testing

// The code block of the article "Migrating from RVS_GeneralObserver"
// (ObserverGraph.docc/MigratingFromRVSGeneralObserver.md), verbatim: DocSnippetTests fails when
// a block of the article is not found here.

@Suite("Docs: Migrating from RVS_GeneralObserver")
struct MigratingArticleTests {
    protocol ScoreObserver {
        func scoreChanged(to score: Int)
    }

    final class Game: GraphObservable {
        let graphNode = GraphNode()  // replaces uuid and observers
        private(set) var score = 0

        func add(_ points: Int) {
            score += points
            broadcast(as: (any ScoreObserver).self) { $0.scoreChanged(to: score) }  // no casts
        }
    }

    final class Scoreboard: ScoreObserver, GraphTrackingObserver {
        let graphNode = GraphNode()  // replaces uuid and subscriptions
        var shown = 0
        func scoreChanged(to score: Int) { shown = score }
        func didSubscribe(to observable: any GraphObservable) { print("now showing a game") }
    }

    @Test("The migrated types work as the comments say")
    func migrated() {
        let game = Game()
        let board = Scoreboard()
        game.addObserver(board)  // was game.subscribe(board); prints "now showing a game"
        game.add(3)  // board.shown == 3
        print(board.isSubscribed(to: game))  // true; was board.amISubscribed(game)
        board.unsubscribeFromAll()  // was board.unsubscribeAll()
        #expect(board.shown == 3 && !board.isSubscribed(to: game) && !game.hasObserver(board))
        #expect(game.addObserver(board) === board && board.subscriptions.count == 1)
        #expect(board.isSubscribed(to: game))
        #expect(game.addObserver(board) == nil)
    }
}
