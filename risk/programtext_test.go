package risk

import (
	"slices"
	"testing"
)

// TestProgramTextProofs: awk and sed are read-only when their program text
// is proven harmless (programtext.go); every construct that runs, writes,
// reads another file or reaches the environment leaves it unproven. Sources:
// POSIX awk, gawk(1), GNU sed(1), GTFOBins awk and sed.
func TestProgramTextProofs(t *testing.T) {
	for _, c := range []struct {
		src      string
		readOnly bool
	}{
		{`awk '{print $1}' a.txt`, true},
		{`awk -F: '{print $1}' data`, true},
		{`awk 'NR==1' f`, true},
		{`awk '{s+=$1} END {print s}' f`, true},
		{`awk -v n=3 'NR<=n' f`, true},
		{`awk '$3 > 100' f`, false}, // ">" is also redirection: not proven
		{`awk 'BEGIN{system("id")}'`, false},
		{`awk '{print > "out"}' f`, false},
		{`awk '{print | "sh"}' f`, false},
		{`awk '{ "date" | getline d }' f`, false},
		{`awk '{getline line < "/etc/shadow"}' f`, false},
		{`awk 'BEGIN{print ENVIRON["AWS_SECRET_ACCESS_KEY"]}'`, false},
		{`awk 'BEGIN{ARGV[1]="/etc/shadow"; ARGC=2} {print}'`, false},
		{`awk 'BEGIN{print PROCINFO["pid"]}'`, false},
		{`awk '@load "filefuncs"; {print}' f`, false},
		{`awk -f prog.awk f`, false},
		{`awk -E prog f`, false},
		{`awk --frob '{print}' f`, false},
		{`awk "$PROG" f`, false},
		{`sed -n 1,5p a.txt`, true},
		{`sed 's/foo/bar/g' f`, true},
		{`sed -E 's|a|b|2; /^#/d' f`, true},
		{`sed '/start/,/end/{s/x/y/;p}' f`, true},
		{`sed '1~2d' f`, true},
		{`sed '$!N;P;D' f`, true},
		{`sed 'y/abc/xyz/' f`, true},
		{`sed '/x/a hello' f`, true},
		{`sed 's/a\/b/c/' f`, true},
		{`sed -n '\,x,p' f`, true},
		{`sed -i 's/a/b/' f`, false},
		{`sed --in-place=.bak 's/a/b/' f`, false},
		{`sed 's/a/b/w out' f`, false},
		{`sed 's/a/id/e' f`, false},
		{`sed '1e id' f`, false},
		{`sed 'w out' f`, false},
		{`sed '1r /etc/shadow' f`, false},
		{`sed 'R secret' f`, false},
		{`sed 'W out' f`, false},
		{`sed 's/a/b/;e' f`, false},
		{`sed -e 's/a/b/' f`, false}, // text from an option: not proven
		{`sed -f script.sed f`, false},
		{`sed "s/$X/y/" f`, false},
		{`sed 's/a/b' f`, false}, // does not parse
	} {
		f, tags := ClassifyShell(c.src)
		if len(f.Commands) == 0 || f.Commands[0].ReadOnly != c.readOnly {
			t.Errorf("%s: read_only, want %v (commands %+v, tags %v)", c.src, c.readOnly, f.Commands, tags)
		}
	}
	// The files a proven program reads are judged as reads.
	for _, src := range []string{`awk '{print}' /etc/shadow`, `sed -n p ~/.aws/credentials`} {
		if _, tags := ClassifyShell(src); !slices.Contains(tags, "shell.secrets") {
			t.Errorf("%s: tags %v", src, tags)
		}
	}
}

func FuzzProgramText(f *testing.F) {
	for _, s := range []string{"s/a/b/g", `\,x,p`, "1~2d;$!N", "/a/,/b/{s/x/y/;p}", "y/ab/cd/", "a\\", `s/\`, "{print $1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sedScriptSafe(s) // never panics
		awkTextSafe(s)
	})
}
