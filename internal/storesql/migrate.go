package storesql

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one schema change of a store: a file of its migrations
// folder named after its number (007_sessions.sql).
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// Pending returns the migrations in dir of fsys numbered above have (the
// schema version a database has), in the order of their names: each store
// applies them its own way and records the version it reached. A file
// whose name does not start with its number is an error.
func Pending(fsys fs.FS, dir string, have int) ([]Migration, error) {
	files, err := fs.ReadDir(fsys, dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, f := range files {
		n, err := strconv.Atoi(strings.SplitN(f.Name(), "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", f.Name())
		}
		if n <= have {
			continue
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, f.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: n, Name: f.Name(), SQL: string(body)})
	}
	return out, nil
}
