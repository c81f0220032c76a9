package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
)

// profileYAML is one entry of the policy's profiles section: what a
// contained run (rein run --profile NAME) may read and which variables
// pass into it (containment.md).
type profileYAML struct {
	Description string           `yaml:"description"`
	Read        []string         `yaml:"read"`
	Env         []string         `yaml:"env"`
	Limits      map[string]int64 `yaml:"limits"`
}

// compileProfiles validates the profiles section: closed world, so a path
// that would expose what containment hides (/, /etc wholesale, a home
// directory, /proc, rein's own state, …) is a problem on its line.
func compileProfiles(src []byte, in map[string]profileYAML) (map[string]rein.Profile, Problems) {
	if len(in) == 0 {
		return nil, nil
	}
	lines := profileLines(src)
	names := sortedKeys(in)
	var ps Problems
	out := make(map[string]rein.Profile, len(in))
	for _, name := range names {
		y, l := in[name], lines[name]
		bad := func(line int, format string, args ...any) {
			if line == 0 {
				line = l.line
			}
			ps = append(ps, Problem{Line: line, Message: fmt.Sprintf("profile %s: ", name) + fmt.Sprintf(format, args...)})
		}
		if !rein.ProfileNameRE().MatchString(name) {
			bad(0, "use lower-case letters, digits, '.', '_' and '-' (at most 64) for a profile's name")
		}
		if len(y.Read) == 0 {
			bad(0, "names no system path to read, so no program could start; list what toolchains need, e.g. read: [/usr, /lib, /bin, /etc/ssl]")
		}
		p := rein.Profile{Name: name, Read: slices.Clone(y.Read), Env: slices.Clone(y.Env)}
		if y.Limits != nil {
			p.Limits = &rein.Limits{}
			for _, k := range sortedKeys(y.Limits) {
				v, b := y.Limits[k], rein.LimitBounds[k]
				switch {
				case b == [2]int64{}:
					bad(l.limits, "limits: %q is not a limit; the limits are %s", k, strings.Join(sortedKeys(rein.LimitBounds), ", "))
					continue
				case v < b[0] || v > b[1]:
					bad(l.limits, "limits: %s must be from %d to %d, not %d", k, b[0], b[1], v)
					continue
				}
				*map[string]*int64{"processes": &p.Limits.Processes, "open_files": &p.Limits.OpenFiles, "memory_mb": &p.Limits.MemoryMB,
					"cpu_seconds": &p.Limits.CPUSeconds, "file_size_mb": &p.Limits.FileSizeMB}[k] = v
			}
		}
		for i, r := range y.Read {
			if err := rein.CheckProfileRead(r); err != nil {
				bad(at(l.read, i), "read %v", err)
			}
			if j := slices.Index(y.Read, r); j < i {
				bad(at(l.read, i), "read %q is listed twice", r)
			}
		}
		for i, e := range y.Env {
			if err := rein.CheckProfileEnv(e); err != nil {
				bad(at(l.env, i), "env %v", err)
			}
		}
		out[name] = p
	}
	return out, ps
}

func at(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// profileLine is where a profile and its entries are in the source.
type profileLine struct {
	line      int
	read, env []int
	limits    int
}

// profileLines finds the line of each profile of the top-level profiles
// section, and of each of its read and env entries.
func profileLines(src []byte) map[string]profileLine {
	out := map[string]profileLine{}
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "profiles" || root.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		profiles := root.Content[i+1].Content
		for j := 0; j+1 < len(profiles); j += 2 {
			pl := profileLine{line: profiles[j].Line}
			if body := profiles[j+1]; body.Kind == yaml.MappingNode {
				for k := 0; k+1 < len(body.Content); k += 2 {
					var lines []int
					for _, item := range body.Content[k+1].Content {
						lines = append(lines, item.Line)
					}
					switch body.Content[k].Value {
					case "read":
						pl.read = lines
					case "env":
						pl.env = lines
					case "limits":
						pl.limits = body.Content[k].Line
					}
				}
			}
			out[profiles[j].Value] = pl
		}
	}
	return out
}

// Profile returns the containment profile called name in the set. A
// profile of the global tier wins over a tenant tier's of the same name (a
// tenant may add profiles, never widen the deployment's; TierProblems
// names such a profile, so activating the tenant tier refuses it). When neither
// tier names any profile, the built-in coding profile is in force
// (rein.CodingProfile), so that a policy written before profiles were
// policy keeps working; once a policy names profiles, only those exist.
func (s *Set) Profile(name string) (rein.Profile, bool) {
	if s != nil {
		for _, t := range s.tiers() {
			if p, ok := t.policy.Profiles[name]; ok {
				return p, true
			}
		}
	}
	if !s.namesProfiles() && name == rein.CodingProfile.Name {
		return rein.CodingProfile, true
	}
	return rein.Profile{}, false
}

// ProfileNames lists the profiles of the set, sorted.
func (s *Set) ProfileNames() []string {
	if !s.namesProfiles() {
		return []string{rein.CodingProfile.Name}
	}
	var out []string
	for _, t := range s.tiers() {
		for n := range t.policy.Profiles {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (s *Set) namesProfiles() bool {
	if s == nil {
		return false
	}
	for _, t := range s.tiers() {
		if len(t.policy.Profiles) > 0 {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
