import com.joansala.engine.Game;
import com.joansala.game.oware.OwareGame;
import com.joansala.game.oware.OwareRoots;

/**
 * Plies the engine (2022) stays in a DOE book when both sides play from
 * it: its own book class picks every move (OwareRoots, that is
 * UCTRoots.pickBestMove over BookReader), its own game plays it, until the
 * book has no move left. No search is involved.
 *
 *   java -cp CLASSES:/ BookPlies /absolute/path/book.bin GAMES
 *
 * ("/" on the class path: the engine opens the book through getResource.)
 */
public class BookPlies {
    public static void main(String[] args) throws Exception {
        OwareRoots book = new OwareRoots(args[0]);
        int games = Integer.parseInt(args[1]);
        int total = 0, fewest = Integer.MAX_VALUE, most = 0;
        for (int g = 0; g < games; g++) {
            OwareGame game = new OwareGame();
            book.newMatch();
            int plies = 0;
            while (!game.hasEnded()) {
                int move = book.pickBestMove(game);
                if (move == Game.NULL_MOVE) {
                    break;
                }
                game.makeMove(move);
                plies++;
            }
            total += plies;
            fewest = Math.min(fewest, plies);
            most = Math.max(most, plies);
        }
        System.out.printf("%s: %d games, %.2f plies in book on average (%d to %d)%n",
            args[0], games, (double) total / games, fewest, most);
        book.close();
    }
}
