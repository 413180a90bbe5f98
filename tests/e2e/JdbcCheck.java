/* JdbcCheck.java - pgjdbc (Debian libpostgresql-jdbc-java) against quarry serve, run by
 * tests/e2e/server.sh as a single-file program: a prepared statement with a
 * text and an int parameter, a GROUP BY with its column names, an error's
 * SQLSTATE (the connection goes on), a timestamp. Prints one line each. */
import java.sql.*;

public class JdbcCheck {
    public static void main(String[] a) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + a[0] + "/quarry?user=quarry";
        try (Connection c = DriverManager.getConnection(url)) {
            try (PreparedStatement p = c.prepareStatement("SELECT count(*) FROM logs WHERE ServiceName = ? AND SeverityNumber >= ?")) {
                p.setString(1, "payment");
                p.setInt(2, 13);
                try (ResultSet r = p.executeQuery()) { r.next(); System.out.println(r.getLong(1)); }
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT ServiceName, count(*) AS n FROM logs GROUP BY 1 ORDER BY 2 DESC LIMIT 1")) {
                r.next();
                System.out.println(r.getString(1) + " " + r.getMetaData().getColumnName(2));
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT nope FROM logs");
            } catch (SQLException e) {
                System.out.println(e.getSQLState());
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 1")) {
                r.next();
                System.out.println(r.getTimestamp(1) != null);
            }
        }
    }
}
