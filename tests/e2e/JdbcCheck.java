/* JdbcCheck.java - pgjdbc (Debian libpostgresql-jdbc-java) against quarry serve, run by
 * tests/e2e/server.sh as a single-file program: a prepared statement with a
 * text and an int parameter, a GROUP BY with its column names, an error's
 * SQLSTATE (the connection goes on), a timestamp; CopyManager copyOut, copyIn
 * into a new table and copyOut again (the same text); Statement.cancel() of a
 * long query (args: port, the long query). Prints one line each. */
import java.io.StringReader;
import java.io.StringWriter;
import java.sql.*;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

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
            CopyManager cm = c.unwrap(PGConnection.class).getCopyAPI();
            String q = "SELECT Timestamp AS ts, ServiceName AS svc, Body AS body, SeverityNumber AS sev, LogAttributes AS attrs FROM logs ORDER BY 1, 2, 3, 4";
            StringWriter first = new StringWriter();
            long out = cm.copyOut("COPY (" + q + ") TO STDOUT (FORMAT csv, HEADER)", first);
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE jdbc_copy (ts timestamp, svc text, body text, sev integer, attrs map)");
            }
            long in = cm.copyIn("COPY jdbc_copy FROM STDIN (FORMAT csv, HEADER)", new StringReader(first.toString()));
            StringWriter second = new StringWriter();
            cm.copyOut("COPY (SELECT * FROM jdbc_copy ORDER BY 1, 2, 3, 4) TO STDOUT (FORMAT csv, HEADER)", second);
            System.out.println("copy " + out + " " + in + " " + first.toString().equals(second.toString()));
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE jdbc_copy");
            }
            try (Statement s = c.createStatement()) {
                Thread t = new Thread(() -> {
                    try { Thread.sleep(300); s.cancel(); } catch (Exception e) { }
                });
                t.start();
                try {
                    s.executeQuery(a[1]);
                    System.out.println("not canceled");
                } catch (SQLException e) {
                    System.out.println("cancel " + e.getSQLState());
                }
                t.join();
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*) FROM logs")) {
                r.next();
                System.out.println("after " + r.getLong(1));
            }
            // autoCommit off: pgjdbc sends COMMIT only when ReadyForQuery said 'T'
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE jdbc_tx (ts timestamp, n integer)");
            }
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                for (int i = 1; i <= 3; i++)
                    s.executeUpdate("INSERT INTO jdbc_tx VALUES ('2025-01-0" + i + "', " + i + ")");
            }
            c.rollback();
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jdbc_tx VALUES ('2025-01-04', ?)")) {
                p.setInt(1, 4);
                p.executeUpdate();
            }
            c.commit();
            c.setAutoCommit(true);
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*), sum(n) FROM jdbc_tx")) {
                r.next();
                System.out.println("tx " + r.getLong(1) + " " + r.getLong(2));
                s.execute("DROP TABLE jdbc_tx");
            }
        }
    }
}
