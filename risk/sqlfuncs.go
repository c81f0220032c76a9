package risk

// sqlSideEffectFuncs are functions, table functions and stored procedures
// that do more than read the database: they read or write server files
// (sql.file), run programs or code (sql.exec), reach other hosts
// (sql.network), change the server itself (sql.admin), or return stored
// credentials (sql.secrets). Names are
// compared lower case, without their schema (pg_catalog.pg_read_file,
// master..xp_cmdshell).
var sqlSideEffectFuncs = map[string][]string{
	// PostgreSQL, "System Administration Functions" (postgresql.org/docs/current/functions-admin.html):
	// generic file access, signalling, configuration, backup and replication control.
	"pg_read_file": {"sql.file"}, "pg_read_binary_file": {"sql.file"}, "pg_stat_file": {"sql.file"},
	"pg_ls_dir": {"sql.file"}, "pg_ls_logdir": {"sql.file"}, "pg_ls_waldir": {"sql.file"},
	"pg_ls_tmpdir": {"sql.file"}, "pg_ls_archive_statusdir": {"sql.file"}, "pg_ls_logicalsnapdir": {"sql.file"},
	"pg_ls_logicalmapdir": {"sql.file"}, "pg_ls_replslotdir": {"sql.file"},
	"pg_terminate_backend": {"sql.admin"}, "pg_cancel_backend": {"sql.admin"}, "pg_reload_conf": {"sql.admin"},
	"pg_rotate_logfile": {"sql.admin"}, "pg_log_backend_memory_contexts": {"sql.admin"},
	"set_config": {"sql.admin"}, "pg_promote": {"sql.admin"}, "pg_switch_wal": {"sql.admin"},
	"pg_backup_start": {"sql.admin"}, "pg_backup_stop": {"sql.admin"}, "pg_start_backup": {"sql.admin"},
	"pg_stop_backup": {"sql.admin"}, "pg_create_restore_point": {"sql.admin"},
	"pg_create_physical_replication_slot": {"sql.admin"}, "pg_create_logical_replication_slot": {"sql.admin"},
	"pg_drop_replication_slot": {"sql.admin"}, "pg_replication_origin_create": {"sql.admin"},
	"pg_wal_replay_pause": {"sql.admin"}, "pg_wal_replay_resume": {"sql.admin"},
	// PostgreSQL large objects, "Server-Side Functions" (postgresql.org/docs/current/lo-funcs.html):
	// lo_import and lo_export read and write server files.
	"lo_import": {"sql.file"}, "lo_export": {"sql.file"}, "lo_unlink": {"sql.admin"},
	// PostgreSQL adminpack (postgresql.org/docs/current/adminpack.html).
	"pg_file_write": {"sql.file"}, "pg_file_rename": {"sql.file"}, "pg_file_unlink": {"sql.file"},
	"pg_file_sync": {"sql.file"}, "pg_logdir_ls": {"sql.file"},
	// PostgreSQL dblink (postgresql.org/docs/current/dblink.html): queries and
	// commands on another server.
	"dblink": {"sql.network"}, "dblink_exec": {"sql.network", "sql.exec"}, "dblink_connect": {"sql.network"},
	"dblink_connect_u": {"sql.network"}, "dblink_send_query": {"sql.network", "sql.exec"},
	"dblink_open": {"sql.network"}, "dblink_fetch": {"sql.network"}, "dblink_get_result": {"sql.network"},
	// PostgreSQL, "XML Functions": query_to_xml and cursor_to_xml run the
	// query text they are given (postgresql.org/docs/current/functions-xml.html).
	"query_to_xml": {"sql.exec"}, "query_to_xml_and_xmlschema": {"sql.exec"}, "query_to_xmlschema": {"sql.exec"},
	"cursor_to_xml": {"sql.exec"},

	// MySQL, "String Functions": LOAD_FILE reads a server file
	// (dev.mysql.com/doc/refman/8.0/en/string-functions.html); sys_exec and
	// sys_eval are the lib_mysqludf_sys user-defined functions.
	"load_file": {"sql.file"}, "sys_exec": {"sql.exec"}, "sys_eval": {"sql.exec"},

	// SQL Server (learn.microsoft.com/sql/relational-databases/system-stored-procedures):
	// xp_cmdshell runs a shell command; the OLE Automation procedures create
	// COM objects; sp_execute_external_script runs R or Python;
	// sp_executesql runs SQL text; OPENROWSET, OPENDATASOURCE and OPENQUERY
	// read files and other servers; sp_configure and RECONFIGURE change the
	// server; xp_dirtree and friends list server (and UNC) paths.
	"xp_cmdshell": {"sql.exec"}, "sp_oacreate": {"sql.exec"}, "sp_oamethod": {"sql.exec"},
	"sp_execute_external_script": {"sql.exec"}, "sp_executesql": {"sql.exec"}, "sp_addextendedproc": {"sql.exec"},
	"sp_add_job": {"sql.exec"}, "sp_add_jobstep": {"sql.exec"}, "sp_start_job": {"sql.exec"},
	"openrowset": {"sql.file", "sql.network"}, "opendatasource": {"sql.network"}, "openquery": {"sql.network"},
	"sp_addlinkedserver": {"sql.network"}, "sp_send_dbmail": {"sql.network"}, "xp_sendmail": {"sql.network"},
	"xp_dirtree": {"sql.file", "sql.network"}, "xp_fileexist": {"sql.file"}, "xp_subdirs": {"sql.file"},
	"xp_regread": {"sql.admin"}, "xp_regwrite": {"sql.admin"}, "sp_configure": {"sql.admin"},
	"sp_addsrvrolemember": {"sql.admin"}, "sp_addlogin": {"sql.admin"}, "sp_password": {"sql.admin"},
	"sp_addrolemember": {"sql.admin"},

	// SQLite: load_extension (sqlite.org/lang_corefunc.html#load_extension);
	// readfile, writefile, edit and fsdir of the sqlite3 shell's fileio
	// extension (sqlite.org/cli.html, "File I/O Functions").
	"load_extension": {"sql.exec"}, "readfile": {"sql.file"}, "writefile": {"sql.file"},
	"edit": {"sql.exec"}, "fsdir": {"sql.file"},

	// DuckDB's table functions that read files, local or remote (a URL
	// argument adds sql.network) (duckdb.org/docs/stable/data/overview,
	// "Data Import"; the csv, json, parquet, excel, iceberg, delta extensions),
	// those that query other databases (duckdb.org/docs/stable/core_extensions/
	// postgres, mysql, sqlite), and duckdb_secrets(), which lists the secrets
	// of the secrets manager.
	"read_csv": {"sql.file"}, "read_csv_auto": {"sql.file"}, "sniff_csv": {"sql.file"},
	"read_parquet": {"sql.file"}, "parquet_scan": {"sql.file"}, "parquet_metadata": {"sql.file"},
	"parquet_schema": {"sql.file"}, "parquet_file_metadata": {"sql.file"}, "parquet_kv_metadata": {"sql.file"},
	"read_json": {"sql.file"}, "read_json_auto": {"sql.file"}, "read_json_objects": {"sql.file"},
	"read_json_objects_auto": {"sql.file"}, "read_ndjson": {"sql.file"}, "read_ndjson_auto": {"sql.file"},
	"read_ndjson_objects": {"sql.file"}, "read_text": {"sql.file"}, "read_blob": {"sql.file"},
	"glob": {"sql.file"}, "read_xlsx": {"sql.file"}, "st_read": {"sql.file"},
	"iceberg_scan": {"sql.file"}, "iceberg_metadata": {"sql.file"}, "iceberg_snapshots": {"sql.file"},
	"delta_scan": {"sql.file"}, "sqlite_scan": {"sql.file"}, "sqlite_attach": {"sql.file"},
	"postgres_scan": {"sql.network"}, "postgres_scan_pushdown": {"sql.network"}, "postgres_attach": {"sql.network"},
	"postgres_query": {"sql.network"}, "postgres_execute": {"sql.network", "sql.exec"},
	"mysql_query": {"sql.network"}, "mysql_execute": {"sql.network", "sql.exec"},
	"duckdb_secrets": {"sql.secrets"},
}

// sqlReadOnlyFuncs are functions that only compute a value from their
// arguments or read the database: the SQL standard's and the four
// dialects' aggregate, window, string, number, date, JSON and conversion
// functions (postgresql.org/docs/current/functions.html,
// dev.mysql.com/doc/refman/8.0/en/built-in-function-reference.html,
// learn.microsoft.com/sql/t-sql/functions, sqlite.org/lang_corefunc.html),
// and type names written with a length (varchar(20)). A call to any other
// function is sql.function: rein cannot tell what it does.
var sqlReadOnlyFuncs = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{
		// aggregates and windows
		"count", "sum", "avg", "min", "max", "array_agg", "string_agg", "group_concat", "json_agg", "jsonb_agg",
		"json_object_agg", "jsonb_object_agg", "bool_and", "bool_or", "every", "stddev", "stddev_pop", "stddev_samp",
		"variance", "var_pop", "var_samp", "percentile_cont", "percentile_disc", "mode", "listagg", "total",
		"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
		"last_value", "nth_value", "grouping",
		// conditionals and conversion
		"coalesce", "nullif", "greatest", "least", "ifnull", "isnull", "iif", "if", "nvl", "cast", "convert",
		"try_cast", "try_convert", "typeof", "pg_typeof",
		// strings
		"lower", "upper", "length", "char_length", "character_length", "octet_length", "bit_length", "len",
		"substring", "substr", "trim", "ltrim", "rtrim", "btrim", "concat", "concat_ws", "replace", "position",
		"strpos", "instr", "left", "right", "lpad", "rpad", "repeat", "reverse", "split_part", "initcap",
		"format", "printf", "quote_ident", "quote_literal", "quote_nullable", "regexp_replace", "regexp_matches",
		"regexp_match", "regexp_split_to_array", "regexp_like", "regexp_substr", "translate", "ascii", "chr",
		"char", "unicode", "hex", "unhex", "md5", "sha1", "sha2", "sha256", "sha512", "encode", "decode",
		"to_hex", "overlay", "starts_with", "locate", "space", "stuff", "charindex", "patindex", "string_split",
		"quotename", "soundex", "difference", "lcase", "ucase", "mid", "field", "elt", "find_in_set",
		"like", "instr", "char_length", "uuid", "gen_random_uuid", "newid", "random", "rand",
		// numbers
		"abs", "ceil", "ceiling", "floor", "round", "trunc", "truncate", "mod", "power", "pow", "sqrt", "exp",
		"ln", "log", "log10", "log2", "sign", "pi", "degrees", "radians", "sin", "cos", "tan", "asin", "acos",
		"atan", "atan2", "div", "width_bucket", "to_number",
		// dates and times
		"now", "current_timestamp", "current_date", "current_time", "localtime", "localtimestamp",
		"clock_timestamp", "statement_timestamp", "transaction_timestamp", "date_trunc", "date_part", "extract",
		"age", "make_date", "make_time", "make_timestamp", "make_timestamptz", "make_interval", "to_char",
		"to_date", "to_timestamp", "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
		"date_add", "date_sub", "datediff", "dateadd", "datename", "datepart", "getdate", "getutcdate",
		"sysdatetime", "year", "month", "day", "hour", "minute", "second", "week", "weekday", "dayofweek",
		"dayofmonth", "dayofyear", "curdate", "curtime", "utc_timestamp", "unix_timestamp", "from_unixtime",
		"str_to_date", "date_format", "timestampdiff", "timestampadd", "last_day", "eomonth", "generate_series",
		// arrays and JSON
		"unnest", "array_length", "array_position", "array_remove", "array_append", "array_cat", "cardinality",
		"array_to_string", "string_to_array", "array_lower", "array_upper", "json_extract", "json_object",
		"json_array", "json_build_object", "json_build_array", "jsonb_build_object", "jsonb_build_array",
		"to_json", "to_jsonb", "row_to_json", "json_each", "jsonb_each", "json_array_elements",
		"jsonb_array_elements", "json_array_length", "jsonb_array_length", "jsonb_set", "jsonb_path_query",
		"json_typeof", "jsonb_typeof", "json_valid", "json_unquote", "json_contains", "json_keys",
		"json_value", "json_query", "isjson", "openjson", "json_group_array", "json_group_object",
		"jsonb_extract_path", "json_extract_path", "jsonb_extract_path_text", "json_extract_path_text",
		"jsonb_strip_nulls", "jsonb_pretty",
		// database introspection that only reads
		"current_user", "session_user", "user", "current_schema", "current_database", "database", "version",
		"current_setting", "pg_get_viewdef", "pg_get_functiondef", "pg_get_indexdef", "pg_table_size",
		"pg_relation_size", "pg_total_relation_size", "pg_size_pretty", "pg_database_size", "has_table_privilege",
		"object_id", "db_name", "schema_name", "last_insert_rowid", "changes", "row_count", "found_rows",
		"last_insert_id", "scope_identity", "sqlite_version", "currval",
		// type names followed by a length or precision
		"varchar", "nvarchar", "character", "nchar", "decimal", "numeric", "float", "real", "timestamp",
		"timestamptz", "interval", "bit", "varbinary", "binary", "datetime2", "datetimeoffset", "varbit",
		"int", "integer", "bigint", "smallint", "double", "text", "bool", "boolean", "bytea", "blob", "number",
		// call-like SQL syntax: ROW(...), ARRAY(...), VALUES (...) and predicates
		"row", "array", "values", "in", "exists", "any", "all", "some", "over", "filter", "within", "not",
		"and", "or", "on", "using", "as", "when", "then", "else", "case", "lateral", "select", "from", "where",
		"by", "having", "set", "into", "is", "between", "except", "union", "intersect", "return", "returns",
		"check", "primary", "key", "unique", "foreign", "references", "default", "constraint", "partition",
		"window", "rows", "range", "groups", "cube", "rollup", "sets", "matched", "conflict", "do", "table",
		"with", "recursive", "include", "only", "distinct", "nulls", "limit", "offset", "top", "fetch",
	} {
		m[n] = true
	}
	return m
}()
