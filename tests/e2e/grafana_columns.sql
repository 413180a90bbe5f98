SELECT quote_ident(column_name) AS "column", data_type AS "type"
        FROM information_schema.columns
        WHERE
          CASE WHEN array_length(parse_ident('public.logs'),1) = 2
            THEN quote_ident(table_schema) = (parse_ident('public.logs'))[1]
              AND quote_ident(table_name) = (parse_ident('public.logs'))[2]
            ELSE quote_ident(table_name) = 'public.logs'
              AND
              quote_ident(table_schema) IN (
              SELECT
                CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
              FROM
                generate_series(
                  array_lower(string_to_array(current_setting('search_path'),','),1),
                  array_upper(string_to_array(current_setting('search_path'),','),1)
                ) as i,
                string_to_array(current_setting('search_path'),',') s
              )
          END;
