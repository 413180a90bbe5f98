/* JdbcMeta.java - pgjdbc's DatabaseMetaData against quarry serve (the
 * catalog answers), run by tests/e2e/server.sh as a single-file program:
 * getTables, getColumns, getSchemas, getCatalogs, getPrimaryKeys,
 * getIndexInfo, a few getTypeInfo rows. Prints the rows, '|'-separated;
 * tests/e2e/expected/jdbc_meta.out is what PostgreSQL 15 gives for the
 * same table (its indexes aside). */
import java.sql.*;

public class JdbcMeta {
    static void dump(String what, ResultSet r, String... cols) throws Exception {
        System.out.println(what);
        while (r.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < cols.length; i++)
                b.append(i > 0 ? "|" : "").append(r.getString(cols[i]));
            System.out.println(b);
        }
    }

    public static void main(String[] a) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + a[0] + "/quarry?user=quarry";
        try (Connection c = DriverManager.getConnection(url)) {
            DatabaseMetaData md = c.getMetaData();
            dump("tables", md.getTables(null, null, "%", new String[] {"TABLE"}), "TABLE_SCHEM",
                 "TABLE_NAME", "TABLE_TYPE");
            dump("columns", md.getColumns(null, "public", "logs", "%"), "COLUMN_NAME", "DATA_TYPE",
                 "TYPE_NAME", "COLUMN_SIZE", "NULLABLE", "ORDINAL_POSITION", "IS_NULLABLE");
            dump("schemas", md.getSchemas(), "TABLE_SCHEM");
            dump("catalogs", md.getCatalogs(), "TABLE_CAT");
            dump("primary keys", md.getPrimaryKeys(null, "public", "logs"), "COLUMN_NAME");
            dump("indexes", md.getIndexInfo(null, "public", "logs", false, true), "INDEX_NAME",
                 "NON_UNIQUE", "ORDINAL_POSITION", "COLUMN_NAME");
            System.out.println("types");
            try (ResultSet r = md.getTypeInfo()) {
                int n = 0;
                StringBuilder b = new StringBuilder();
                while (r.next()) {
                    n++;
                    String t = r.getString("TYPE_NAME");
                    if (t.equals("int4") || t.equals("text") || t.equals("timestamptz") || t.equals("json"))
                        b.append(t).append('=').append(r.getInt("DATA_TYPE")).append(' ');
                }
                System.out.println((n > 40) + " " + b.toString().trim());
            }
        }
    }
}
