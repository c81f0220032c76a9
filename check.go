package rein

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/reinhq/rein/canonjson"
)

// Limits on a check's fields. They keep one request's cost bounded; each is
// named in the 400 message a client gets when it goes past one.
const (
	MaxToolLen      = 256
	MaxSessionLen   = 256
	MaxAgentLen     = 256
	MaxIntentLen    = 8192
	MaxLabels       = 64
	MaxLabelLen     = 1024
	MaxRequestIDLen = 256
	MaxWaitMS       = 300000
	// MaxSafeInteger is the largest integer every JSON reader holds exactly
	// (2^53); larger integers in args must be sent as strings.
	MaxSafeInteger = canonjson.MaxSafeInteger
)

// CheckRequest is the body of POST /v1/check.
type CheckRequest struct {
	Tool      string            `json:"tool"`
	Args      json.RawMessage   `json:"args,omitempty"`
	Session   string            `json:"session,omitempty"`
	Agent     string            `json:"agent,omitempty"`
	Intent    string            `json:"intent,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Cost      *float64          `json:"cost,omitempty"`
	RequestID string            `json:"request_id,omitempty"`
	WaitMS    int64             `json:"wait_ms,omitempty"`
	// Batch groups the checks of one agent turn, so that approvers can
	// decide its approvals together (approvals.md). Not part of the action.
	Batch string `json:"batch,omitempty"`
}

var checkFields = "tool, args, session, agent, intent, labels, cost, request_id, wait_ms, batch"

// DecodeCheck parses and validates a check body strictly: unknown fields,
// duplicate keys, trailing data, wrong types and values out of range are all
// errors that say how to fix the request.
func DecodeCheck(body []byte) (*CheckRequest, error) {
	var req CheckRequest
	if err := DecodeStrict(body, &req, checkFields); err != nil {
		return nil, err
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	return &req, nil
}

// Validate checks a request's fields as DecodeCheck does; entry points that
// build a CheckRequest themselves (hooks, gateways) call it too.
func (r *CheckRequest) Validate() error { return r.validate() }

func (r *CheckRequest) validate() error {
	if r.Tool == "" {
		return Errorf(ECodeBadRequest, `"tool" is required: name the tool or action, e.g. "shell.exec"`)
	}
	if err := checkText("tool", r.Tool, MaxToolLen); err != nil {
		return err
	}
	if err := checkText("session", r.Session, MaxSessionLen); err != nil {
		return err
	}
	if err := checkText("agent", r.Agent, MaxAgentLen); err != nil {
		return err
	}
	if err := checkText("batch", r.Batch, MaxSessionLen); err != nil {
		return err
	}
	if len(r.Intent) > MaxIntentLen {
		return Errorf(ECodeBadRequest, `"intent" is %d bytes; the limit is %d`, len(r.Intent), MaxIntentLen)
	}
	if len(r.Labels) > MaxLabels {
		return Errorf(ECodeBadRequest, `"labels" has %d entries; the limit is %d`, len(r.Labels), MaxLabels)
	}
	for k, v := range r.Labels {
		if k == "" || len(k) > MaxLabelLen || len(v) > MaxLabelLen {
			return Errorf(ECodeBadRequest, `label %.40q: keys must be 1..%d bytes and values at most %d bytes`, k, MaxLabelLen, MaxLabelLen)
		}
		if err := CheckName("labels", k); err != nil {
			return err
		}
		if err := CheckName("labels."+k, v); err != nil {
			return err
		}
	}
	if r.Cost != nil && (*r.Cost < 0 || math.IsInf(*r.Cost, 0) || math.IsNaN(*r.Cost)) {
		return Errorf(ECodeBadRequest, `"cost" must be a non-negative number`)
	}
	if err := checkText("request_id", r.RequestID, MaxRequestIDLen); err != nil {
		return err
	}
	if r.WaitMS < 0 || r.WaitMS > MaxWaitMS {
		return Errorf(ECodeBadRequest, `"wait_ms" must be between 0 and %d`, MaxWaitMS)
	}
	if len(r.Args) == 0 || string(r.Args) == "null" {
		r.Args = json.RawMessage("{}")
	}
	if r.Args[0] != '{' {
		return Errorf(ECodeBadRequest, `"args" must be a JSON object, e.g. {"command": "ls"}`)
	}
	return nil
}

// checkText rejects over-long values (counted in characters) and the
// characters of hiddenRunes, which have no place in names and would make
// logs, consoles and approval messages lie.
func checkText(field, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return Errorf(ECodeBadRequest, "%q is %d characters; the limit is %d", field, n, max)
	}
	return CheckName(field, s)
}

// CheckName refuses a name (a tool, session, agent, request id or label)
// that holds a character of hiddenRunes, naming the field and the code point.
func CheckName(field, s string) error {
	for _, c := range s {
		if c >= 0x20 && c < 0x7f { // printable ASCII: in none of hiddenRunes
			continue
		}
		for _, h := range hiddenRunes {
			if h.is(c) {
				return Errorf(ECodeBadRequest, "%q contains U+%04X, %s; names must be printable text without it", field, c, h.what)
			}
		}
	}
	return nil
}

// hiddenRunes are characters a name is refused for, because they are
// invisible, reorder or break the text around them, or stand for text that
// was not valid Unicode. Sources: the Unicode general categories Cc, Cf, Zl
// and Zp (Unicode Standard, chapter 4.5, as Go's unicode tables give them),
// which hold the C0 and C1 controls (U+0085 NEXT LINE among them), the
// bidirectional controls of UAX #9 (U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069; "Trojan Source", CVE-2021-42574) and the zero-width
// characters (U+200B-U+200D, U+2060, U+FEFF); and U+FFFD, which
// encoding/json puts in place of a lone surrogate escape ("\ud800"), so two
// different requests would name the same thing.
var hiddenRunes = []struct {
	is   func(rune) bool
	what string
}{
	{func(c rune) bool { return unicode.Is(unicode.Cc, c) }, "a control character"},
	{func(c rune) bool {
		return c >= 0x202A && c <= 0x202E || c >= 0x2066 && c <= 0x2069 || c == 0x200E || c == 0x200F || c == 0x061C
	},
		"a bidirectional control (it reorders the text shown around it)"},
	{func(c rune) bool { return c >= 0x200B && c <= 0x200D || c == 0x2060 || c == 0xFEFF }, "a zero-width character"},
	{func(c rune) bool { return unicode.Is(unicode.Cf, c) }, "an invisible format character"},
	{func(c rune) bool { return unicode.Is(unicode.Zl, c) || unicode.Is(unicode.Zp, c) }, "a line or paragraph separator"},
	{func(c rune) bool { return c == utf8.RuneError }, "the replacement character (the text was not valid Unicode, e.g. a lone \\uD800 escape)"},
}

// DecodeStrict decodes one JSON value into v, rejecting invalid UTF-8,
// duplicate object keys, unknown fields, unsafe integers and trailing data.
// known lists the accepted fields for the error message.
func DecodeStrict(body []byte, v any, known string) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return Errorf(ECodeBadRequest, "the request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return Errorf(ECodeBadRequest, "the request body is not valid UTF-8")
	}
	// The quick test first: one value, plain keys, every top-level key a
	// field's exact name. Anything else gets the full checks, which also say
	// what is wrong.
	names := fieldNames(v)
	exact := true
	clean := canonjson.Clean(body, func(key []byte) {
		if names != nil && !names[string(key)] {
			exact = false
		}
	})
	if !clean {
		if err := CheckJSON(body); err != nil {
			return err
		}
	}
	if !clean || !exact {
		if err := exactFields(body, names, known); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, known)
	}
	if clean { // exactly one value: nothing follows it
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(ECodeBadRequest, "the request body has data after the JSON object; send exactly one object")
	}
	return nil
}

// fieldNames is the set of JSON names of a struct's fields (nil when v
// is not a pointer to a struct), worked out once per type.
func fieldNames(v any) map[string]bool {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	if names, ok := fieldNamesOf.Load(t); ok {
		return names.(map[string]bool)
	}
	s := t
	for s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	var names map[string]bool
	if s.Kind() == reflect.Struct {
		names = map[string]bool{}
		addFieldNames(s, names)
	}
	fieldNamesOf.Store(t, names)
	return names
}

// addFieldNames adds the JSON names of struct type s's fields, and of the
// fields of the structs it embeds without a name, as encoding/json reads
// them.
func addFieldNames(s reflect.Type, names map[string]bool) {
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			addFieldNames(f.Type, names)
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
}

var fieldNamesOf sync.Map // reflect.Type -> map[string]bool

// exactFields rejects top-level keys that match a field only when case is
// ignored ("Tool", "ARGS"): encoding/json would accept them, and two readers
// of the same body must never see different actions.
func exactFields(body []byte, names map[string]bool, known string) error {
	if names == nil {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil // not an object: the decoder says what is wrong
	}
	for k := range top {
		if names[k] {
			continue
		}
		for name := range names {
			if strings.EqualFold(name, k) {
				return Errorf(ECodeBadRequest, "unknown field %q (field names are case-sensitive: write %q); known fields: %s", k, name, known)
			}
		}
		return Errorf(ECodeBadRequest, "unknown field %q; known fields: %s", k, known)
	}
	return nil
}

func jsonError(err error, known string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return Errorf(ECodeBadRequest, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return Errorf(ECodeBadRequest, "the body must be a JSON object, not %s", typ.Value)
		}
		got := typ.Value // "number 1.0", "string", "object"...
		if n, ok := strings.CutPrefix(got, "number "); ok {
			got = n
		}
		return Errorf(ECodeBadRequest, "field %q must be %s, not %s", field, jsonTypeName(typ.Type.Kind().String()), got)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return Errorf(ECodeBadRequest, "unknown field %s; known fields: %s", name, known)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(ECodeBadRequest, "malformed JSON: the body ends before the object does")
	}
	return Errorf(ECodeBadRequest, "malformed JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "true or false"
	case "ptr", "interface":
		return "a value of another type"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number (no fraction, no exponent)"
	}
	return "a number"
}

// CheckJSON walks a JSON document and rejects duplicate object keys (two
// parsers could disagree on which one counts) and integers that lose precision
// as IEEE doubles (the canonical form of RFC 8785 would silently change them).
func CheckJSON(body []byte) error {
	if canonjson.Clean(body, nil) {
		return nil
	}
	return checkJSONFull(body)
}

// checkJSONFull is CheckJSON for what the quick test could not show clean.
func checkJSONFull(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		folded map[string]string // each key case-folded in NFKC form -> the key
		expect bool              // in an object: the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return jsonError(err, "")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, _ := tok.(string)
			if _, dup := top.keys[key]; dup {
				return Errorf(ECodeBadRequest, "duplicate key %q in a JSON object; send each key once", key)
			}
			top.keys[key] = struct{}{}
			// Keys that differ only in case or Unicode form ("command" and
			// "Command", "ｃommand") are one key to case-insensitive
			// decoders (Go's encoding/json among them) and two to rein:
			// a tool could run the one rein did not judge.
			f := strings.ToLower(norm.NFKC.String(key))
			if other, clash := top.folded[f]; clash {
				return Errorf(ECodeBadRequest, "keys %q and %q of one JSON object differ only in case or Unicode form, and tools may read either; send one", other, key)
			}
			top.folded[f] = key
			top.expect = false
			continue
		}
		if top != nil && top.object {
			top.expect = true
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]struct{}{}, folded: map[string]string{}, expect: true})
			case '[':
				stack = append(stack, &frame{})
			case ']', '}':
				stack = stack[:len(stack)-1]
			}
		case json.Number:
			if _, err := parseNumber(t); err != nil {
				return err
			}
		}
	}
}

// parseNumber is canonjson.ParseNumber with its refusal as a bad request.
func parseNumber(n json.Number) (any, error) {
	v, err := canonjson.ParseNumber(n)
	if err != nil {
		return nil, Errorf(ECodeBadRequest, "%s", err)
	}
	return v, nil
}

// ParseArgs decodes a JSON object into Go values for policy evaluation: objects
// as map[string]any, arrays as []any, integers as int64, other numbers as float64.
func ParseArgs(raw json.RawMessage) (map[string]any, error) {
	// Every entry point's arguments meet the rules of POST /v1/check: no
	// duplicate keys, none that differ only in case, exact numbers.
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := CheckJSON(raw); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, Errorf(ECodeBadRequest, `"args" must be a JSON object: %v`, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	v, err := convertNumbers(m)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func convertNumbers(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		return parseNumber(t)
	case map[string]any:
		for k, x := range t {
			c, err := convertNumbers(x)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
	case []any:
		for i, x := range t {
			c, err := convertNumbers(x)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
	}
	return v, nil
}

// Canonical returns the RFC 8785 (JCS) canonical form of a JSON value: JSON
// text (json.RawMessage), or a Go value as json.Marshal would write it.
func Canonical(v any) (json.RawMessage, error) {
	out, err := canonjson.AppendValue(nil, v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// ActionHash binds an approval to one exact action: "sha256:" + hex SHA-256 of
// the canonical JSON of tenant, agent, session, tool and args.
func ActionHash(tenant, agent, session, tool string, args json.RawMessage) (string, error) {
	canon, err := Canonical(map[string]any{
		"tenant": tenant, "agent": agent, "session": session, "tool": tool, "args": args,
	})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// AgentFor applies the identity rule of api.md: the acting agent is the key's
// name, or a sub-agent "<keyname>/<suffix>". Anything else is forbidden.
func AgentFor(keyName, asked string) (string, error) {
	if asked == "" || asked == keyName {
		return keyName, nil
	}
	if suffix, ok := strings.CutPrefix(asked, keyName+"/"); ok && suffix != "" {
		return asked, nil
	}
	return "", Errorf(ECodeForbidden, "key %q may act as %q or %q, not as %q", keyName, keyName, keyName+"/<sub-agent>", asked)
}

// CheckResponse is the answer to POST /v1/check, field for field as api.md fixes it.
type CheckResponse struct {
	ID            string          `json:"id"`
	Decision      Decision        `json:"decision"`
	Reason        string          `json:"reason"`
	Rule          string          `json:"rule"`
	PolicyVersion string          `json:"policy_version"`
	Risk          []string        `json:"risk"`
	ActionHash    string          `json:"action_hash"`
	Args          json.RawMessage `json:"args"`
	Approval      *ApprovalRef    `json:"approval"`
	RetryAfterMS  *int64          `json:"retry_after_ms"`
	AuditIndex    int64           `json:"audit_index"`
}

// CheckRecord is a stored check: the answer as it was sent, plus what was asked
// and what rein derived. GET /v1/checks/{id} returns it.
type CheckRecord struct {
	CheckResponse
	Tenant    string         `json:"tenant"`
	CreatedAt time.Time      `json:"created_at"`
	Check     CheckInput     `json:"check"`
	Facts     map[string]any `json:"facts"`
	Shadow    []ShadowMatch  `json:"shadow"`
	// Result is what the agent reported after running the action, if it did.
	Result *CheckResult `json:"result"`
	KeyID  string       `json:"-"`
	// Taints is true when the check, if allowed, taints its session.
	Taints bool `json:"-"`
	// RunArgsHash is the hash of the arguments to run (rein.ArgsHash), as
	// the agent computes it: a reported result is compared with it, since
	// the record keeps the arguments with their secrets redacted.
	RunArgsHash string `json:"args_hash,omitempty"`
	// Review, when set, is a review after the fact of this allowed check,
	// stored in the same transaction (its review.created entry is among
	// the check's entries).
	Review *Review `json:"-"`
}

// CheckInput is the request as rein understood it, after validation.
type CheckInput struct {
	Tool      string            `json:"tool"`
	Args      json.RawMessage   `json:"args"`
	Session   string            `json:"session"`
	Agent     string            `json:"agent"`
	Intent    string            `json:"intent"`
	Labels    map[string]string `json:"labels"`
	Cost      float64           `json:"cost"`
	RequestID string            `json:"request_id"`
	Batch     string            `json:"batch,omitempty"`
}

// ShadowMatch is a rule in `mode: shadow` that matched: what it would have done.
type ShadowMatch struct {
	Rule     string   `json:"rule"`
	Decision Decision `json:"decision"`
	Error    string   `json:"error,omitempty"`
}

// CheckFilter selects checks for a list (GET /v1/checks); zero fields do
// not filter. Agent matches the agent and its sub-agents (agent/...).
// Since is inclusive, Until exclusive.
type CheckFilter struct {
	Decision Decision
	Agent    string
	Tool     string
	Session  string
	Since    time.Time
	Until    time.Time
	Limit    int
	Before   string // cursor: the id of the last item of the previous page
}

// CheckStore keeps decided checks and the results agents report of them.
// RecordCheck also writes what a check changed of its session and approval.
type CheckStore interface {
	// RecordCheck stores a decided check, the approval it created (if any) and
	// its audit entries, and sets rec.AuditIndex to the index of entries[0].
	// When the key already used rec's request_id it returns the stored record
	// and ErrDuplicateRequest. At most one approval per action is pending:
	// when created would be a second, it returns ErrApprovalPending. Pending
	// approvals of that action whose time ran out are expired first.
	// When use is set, the check's allow comes from an approval's grant: use
	// is applied to that approval in the same transaction, and its error
	// (the grant is gone) aborts the whole write.
	RecordCheck(ctx context.Context, rec *CheckRecord, created *Approval, use *ApprovalUse, entries []*Entry) (*CheckRecord, error)
	CheckByID(ctx context.Context, id string) (*CheckRecord, error)
	CheckByRequestID(ctx context.Context, keyID, requestID string) (*CheckRecord, error)
	// Checks lists a tenant's checks ("*": every tenant) that pass the
	// filter, newest first.
	Checks(ctx context.Context, tenant string, f CheckFilter) ([]*CheckRecord, error)
	// RecordResult stores a check's result with its audit entry and, when
	// the result reports a cost, corrects the session's cost. A second
	// result for one check is a conflict.
	RecordResult(ctx context.Context, rec *CheckRecord, res *CheckResult, e *Entry) error
}
