package risk

// BuiltinTools say where well-known tools carry commands, paths, URLs and
// SQL, so that rein reads them even when a policy's tools: map does not
// mention them. They add to a policy's own entries; nothing switches them off.
//
// Tool names come from the agents that call them: Claude Code (Bash, Read,
// Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, WebFetch), the MCP
// reference servers behind rein's gateway (fs.read_file, fetch.fetch, and
// Claude Code's mcp__server__tool spelling), and common names (shell, exec,
// run_command, bash, sql, query).
var BuiltinTools = []ToolSpec{
	{Pattern: "Bash", Shell: []string{"command"}},
	{Pattern: "Read", Path: []string{"file_path"}},
	{Pattern: "Write", Path: []string{"file_path"}},
	{Pattern: "Edit", Path: []string{"file_path"}},
	{Pattern: "MultiEdit", Path: []string{"file_path"}},
	{Pattern: "NotebookEdit", Path: []string{"notebook_path"}},
	{Pattern: "Glob", Path: []string{"path"}},
	{Pattern: "Grep", Path: []string{"path"}},
	{Pattern: "WebFetch", URL: []string{"url"}, TaintsSession: true},

	// @modelcontextprotocol/server-filesystem
	{Pattern: "*read_file", Path: []string{"path"}},
	{Pattern: "*read_text_file", Path: []string{"path"}},
	{Pattern: "*read_media_file", Path: []string{"path"}},
	{Pattern: "*read_multiple_files", Path: []string{"paths"}},
	{Pattern: "*write_file", Path: []string{"path"}},
	{Pattern: "*edit_file", Path: []string{"path"}},
	{Pattern: "*create_directory", Path: []string{"path"}},
	{Pattern: "*list_directory", Path: []string{"path"}},
	{Pattern: "*list_directory_with_sizes", Path: []string{"path"}},
	{Pattern: "*directory_tree", Path: []string{"path"}},
	{Pattern: "*move_file", Path: []string{"source", "destination"}},
	{Pattern: "*search_files", Path: []string{"path"}},
	{Pattern: "*get_file_info", Path: []string{"path"}},
	// @modelcontextprotocol/server-fetch (and anything named fetch)
	{Pattern: "fetch", URL: []string{"url"}, TaintsSession: true},
	{Pattern: "*.fetch", URL: []string{"url"}, TaintsSession: true},
	{Pattern: "*__fetch", URL: []string{"url"}, TaintsSession: true},

	{Pattern: "shell", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "*.shell", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "*__shell", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "exec", Shell: []string{"command", "cmd"}},
	{Pattern: "*.exec", Shell: []string{"command", "cmd"}},
	{Pattern: "*__exec", Shell: []string{"command", "cmd"}},
	{Pattern: "run_command", Shell: []string{"command", "cmd"}},
	{Pattern: "*.run_command", Shell: []string{"command", "cmd"}},
	{Pattern: "*__run_command", Shell: []string{"command", "cmd"}},
	{Pattern: "bash", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "*.bash", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "*__bash", Shell: []string{"command", "cmd", "script"}},
	{Pattern: "sql", SQL: []string{"query", "sql"}},
	{Pattern: "*.sql", SQL: []string{"query", "sql"}},
	{Pattern: "*__sql", SQL: []string{"query", "sql"}},
	{Pattern: "query", SQL: []string{"query", "sql"}},
	{Pattern: "*.query", SQL: []string{"sql"}},
	{Pattern: "*__query", SQL: []string{"sql"}},
	{Pattern: "*read_query", SQL: []string{"query"}},
	{Pattern: "*write_query", SQL: []string{"query"}},
}
