// Package question is the question state machine and answer validation:
// what a question may ask (free text, one of a list of choices, or a flat
// form described by a JSON Schema), which answers fit it, who may answer,
// and when it expires. It is pure: a question and a clock in, the changed
// question and the transition out. Storage serialises the calls.
//
//	pending -> answered | expired | cancelled
//
// Every other state is terminal and never changes.
package question

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// Causes recorded when a question leaves pending.
const (
	CauseAnswered  = "answered"
	CauseTimeout   = "timeout"   // nobody answered before expires_at
	CauseCancelled = "cancelled" // the asking agent or an admin withdrew it
)

// Limits on what a question may hold.
const (
	MaxText    = 4000     // characters of question text
	MaxChoices = 50       // choices
	MaxChoice  = 200      // characters per choice
	MaxFields  = 50       // form fields
	MaxAnswer  = 64 << 10 // bytes of an answer
)

// Errors. The HTTP layer maps ErrNotPending to 409, ErrSelfAnswer and
// ErrNotAsked to 403, ErrBadQuestion and ErrBadAnswer to 400.
var (
	ErrNotPending  = errors.New("the question is no longer pending")
	ErrSelfAnswer  = errors.New("the key that asked cannot answer its own question")
	ErrNotAsked    = errors.New("the key matches none of the question's ask selectors")
	ErrBadQuestion = errors.New("bad question")
	ErrBadAnswer   = errors.New("the answer does not fit the question")
)

// DefaultAsk is who may answer when the question names nobody: any
// approver or admin of the tenant.
var DefaultAsk = []string{"role:approver", "role:admin"}

// Transition is what a change did (the approval package's type: both move
// durable requests from pending to a final state).
type Transition = approval.Transition

// selectorRE is compiled on first use, not at every start of rein (its
// bounded repetition compiles to one instruction per repeat).
var selectorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(group|user|role):[A-Za-z0-9._@/-]{1,128}$`) })

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuestion, fmt.Sprintf(format, args...))
}

// Prepare checks a question as asked and fills in what it leaves out: the
// default selectors, and the form schema in canonical form. A question has
// text, and at most one of choices and schema.
func Prepare(q *rein.Question) error {
	q.Text = strings.TrimSpace(q.Text)
	switch {
	case q.Text == "":
		return bad(`"text" is required: the question to put to a person`)
	case utf8.RuneCountInString(q.Text) > MaxText:
		return bad(`"text" is longer than %d characters`, MaxText)
	case len(q.Choices) > 0 && len(q.Schema) > 0:
		return bad(`give "choices" or "schema", not both`)
	case len(q.Choices) > MaxChoices:
		return bad(`"choices" has %d entries; at most %d`, len(q.Choices), MaxChoices)
	}
	for i, c := range q.Choices {
		if strings.TrimSpace(c) == "" || utf8.RuneCountInString(c) > MaxChoice {
			return bad(`choice %d must be non-empty text of at most %d characters`, i+1, MaxChoice)
		}
		if slices.Contains(q.Choices[:i], c) {
			return bad(`choice %q is listed twice`, c)
		}
	}
	if len(q.Schema) > 0 {
		if _, err := ParseForm(q.Schema); err != nil {
			return err
		}
		// Kept as sent (compacted), not canonicalised: the order of the
		// properties is the order the form's fields are shown in.
		var buf bytes.Buffer
		if err := json.Compact(&buf, q.Schema); err != nil {
			return bad("schema: %v", err)
		}
		q.Schema = buf.Bytes()
	}
	if len(q.Ask) == 0 {
		q.Ask = slices.Clone(DefaultAsk)
	}
	for _, s := range q.Ask {
		if !selectorRE().MatchString(s) {
			return bad(`ask selector %q: use group:<name>, user:<key name> or role:<role>`, s)
		}
	}
	return nil
}

// Form is the flat JSON Schema of a form question: an object whose
// properties are strings, numbers, integers or booleans (the subset MCP
// elicitation uses, so one form renders in a console, a CLI and an MCP
// client alike). The form is closed: answers may not carry other fields.
type Form struct {
	Schema               string            `json:"$schema,omitempty"`
	Type                 string            `json:"type"`
	Title                string            `json:"title,omitempty"`
	Description          string            `json:"description,omitempty"`
	Properties           map[string]*Field `json:"properties"`
	Required             []string          `json:"required,omitempty"`
	AdditionalProperties *bool             `json:"additionalProperties,omitempty"`
}

// Field is one property of a form.
type Field struct {
	Type        string   `json:"type"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Format      string   `json:"format,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Default     any      `json:"default,omitempty"`

	pattern *regexp.Regexp
}

const formKeywords = "$schema, type, title, description, properties, required, additionalProperties"
const fieldKeywords = "type, title, description, enum, enumNames, minLength, maxLength, pattern, format, minimum, maximum, default"

// ParseForm reads and checks a form schema. Unknown keywords are refused:
// a keyword rein does not enforce must not look as if it were enforced.
func ParseForm(raw json.RawMessage) (*Form, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, bad(`"schema" must be a JSON Schema object: {"type": "object", "properties": {...}}`)
	}
	for k := range top {
		if !slices.Contains(strings.Split(formKeywords, ", "), k) {
			return nil, bad("schema keyword %q is not supported; a form schema may use %s", k, formKeywords)
		}
	}
	var f Form
	if err := strictDecode(raw, &f); err != nil {
		return nil, bad("schema: %v", err)
	}
	if f.Type != "object" {
		return nil, bad(`schema "type" must be "object", got %q`, f.Type)
	}
	if len(f.Properties) == 0 {
		return nil, bad(`schema "properties" is empty: name at least one field`)
	}
	if len(f.Properties) > MaxFields {
		return nil, bad("schema has %d properties; at most %d", len(f.Properties), MaxFields)
	}
	if f.AdditionalProperties != nil && *f.AdditionalProperties {
		return nil, bad(`schema "additionalProperties" may only be false: forms are closed`)
	}
	for _, r := range f.Required {
		if f.Properties[r] == nil {
			return nil, bad("required field %q is not among the properties", r)
		}
	}
	for name, fd := range f.Properties {
		if err := checkField(name, fd); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return fmt.Errorf("%v (a field may use %s)", err, fieldKeywords)
		}
		return err
	}
	return nil
}

func checkField(name string, f *Field) error {
	if name == "" || len(name) > 64 {
		return bad("form field names must be 1 to 64 characters")
	}
	if f == nil {
		return bad("field %q has no schema", name)
	}
	switch f.Type {
	case "string":
		if f.Minimum != nil || f.Maximum != nil {
			return bad("field %q: minimum/maximum are for number fields", name)
		}
	case "number", "integer", "boolean":
		if len(f.Enum) > 0 || f.MinLength != nil || f.MaxLength != nil || f.Pattern != "" || f.Format != "" {
			return bad("field %q: enum, minLength, maxLength, pattern and format are for string fields", name)
		}
		if f.Type == "boolean" && (f.Minimum != nil || f.Maximum != nil) {
			return bad("field %q: minimum/maximum are for number fields", name)
		}
	default:
		return bad(`field %q: type must be "string", "number", "integer" or "boolean" (forms are flat), got %q`, name, f.Type)
	}
	switch f.Format {
	case "", "email", "uri", "date", "date-time":
	default:
		return bad(`field %q: format %q is not supported; use email, uri, date or date-time`, name, f.Format)
	}
	if len(f.EnumNames) > 0 && len(f.EnumNames) != len(f.Enum) {
		return bad("field %q: enumNames must name each enum value", name)
	}
	if f.Pattern != "" {
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return bad("field %q: pattern does not compile: %v", name, err)
		}
		f.pattern = re
	}
	if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
		return bad("field %q: minLength is above maxLength", name)
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		return bad("field %q: minimum is above maximum", name)
	}
	return nil
}

// Answer records v's answer at now. The answer must fit the question: for
// free text a non-empty string, for choices one of them exactly, for a form
// an object that the form's schema accepts.
func Answer(q *rein.Question, v approval.Voter, answer json.RawMessage, now time.Time) (Transition, error) {
	if q.Status != rein.StatusPending || !now.Before(q.ExpiresAt) {
		return Transition{}, ErrNotPending
	}
	if v.KeyID != "" && v.KeyID == q.AgentKeyID {
		return Transition{}, ErrSelfAnswer
	}
	if !slices.ContainsFunc(q.Ask, func(s string) bool { return approval.Matches(s, v) }) {
		return Transition{}, fmt.Errorf("%w (%s)", ErrNotAsked, strings.Join(q.Ask, ", "))
	}
	canon, err := Fit(q, answer)
	if err != nil {
		return Transition{}, err
	}
	q.Answer, q.AnsweredBy, q.AnsweredByKey = canon, v.Name, v.KeyID
	resolve(q, rein.StatusAnswered, now)
	return Transition{From: rein.StatusPending, To: rein.StatusAnswered, Cause: CauseAnswered}, nil
}

// Fit checks an answer against the question and returns it canonicalised.
func Fit(q *rein.Question, answer json.RawMessage) (json.RawMessage, error) {
	if len(answer) > MaxAnswer {
		return nil, fmt.Errorf("%w: the answer is larger than %d bytes", ErrBadAnswer, MaxAnswer)
	}
	if len(q.Schema) > 0 {
		f, err := ParseForm(q.Schema)
		if err != nil {
			return nil, err
		}
		if err := f.Check(answer); err != nil {
			return nil, err
		}
		return rein.Canonical(answer)
	}
	var s string
	if err := json.Unmarshal(answer, &s); err != nil {
		if len(q.Choices) > 0 {
			return nil, fmt.Errorf("%w: answer with one of the choices as a string: %s", ErrBadAnswer, quoted(q.Choices))
		}
		return nil, fmt.Errorf("%w: answer with text (a JSON string)", ErrBadAnswer)
	}
	switch {
	case len(q.Choices) > 0 && !slices.Contains(q.Choices, s):
		return nil, fmt.Errorf("%w: %q is not one of the choices %s", ErrBadAnswer, s, quoted(q.Choices))
	case strings.TrimSpace(s) == "":
		return nil, fmt.Errorf("%w: the answer is empty", ErrBadAnswer)
	}
	return json.Marshal(s)
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Check validates a form answer: a JSON object holding only the form's
// fields, every required one, each of its type and within its constraints.
func (f *Form) Check(answer json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(answer, &obj); err != nil || obj == nil {
		return fmt.Errorf("%w: answer the form with a JSON object of its fields", ErrBadAnswer)
	}
	for _, r := range f.Required {
		if _, ok := obj[r]; !ok {
			return fmt.Errorf("%w: field %q is required", ErrBadAnswer, r)
		}
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names) // the first problem reported is the same every time
	for _, k := range names {
		fd := f.Properties[k]
		if fd == nil {
			return fmt.Errorf("%w: the form has no field %q", ErrBadAnswer, k)
		}
		if err := fd.check(obj[k]); err != nil {
			return fmt.Errorf("%w: field %q %v", ErrBadAnswer, k, err)
		}
	}
	return nil
}

func (f *Field) check(raw json.RawMessage) error {
	switch f.Type {
	case "boolean":
		if string(raw) != "true" && string(raw) != "false" {
			return errors.New("must be true or false")
		}
	case "number", "integer":
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil || bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
			return fmt.Errorf("must be a %s", f.Type)
		}
		x, err := n.Float64()
		if err != nil {
			return fmt.Errorf("must be a %s in range", f.Type)
		}
		if f.Type == "integer" && (x != math.Trunc(x) || math.Abs(x) > 1<<53) {
			return errors.New("must be a whole number")
		}
		if f.Minimum != nil && x < *f.Minimum {
			return fmt.Errorf("must be at least %v", *f.Minimum)
		}
		if f.Maximum != nil && x > *f.Maximum {
			return fmt.Errorf("must be at most %v", *f.Maximum)
		}
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errors.New("must be a string")
		}
		n := utf8.RuneCountInString(s)
		switch {
		case len(f.Enum) > 0 && !slices.Contains(f.Enum, s):
			return fmt.Errorf("must be one of %s", quoted(f.Enum))
		case f.MinLength != nil && n < *f.MinLength:
			return fmt.Errorf("must be at least %d characters", *f.MinLength)
		case f.MaxLength != nil && n > *f.MaxLength:
			return fmt.Errorf("must be at most %d characters", *f.MaxLength)
		case f.pattern != nil && !f.pattern.MatchString(s):
			return fmt.Errorf("must match the pattern %s", f.Pattern)
		}
		return checkFormat(f.Format, s)
	}
	return nil
}

func checkFormat(format, s string) error {
	var ok bool
	switch format {
	case "":
		return nil
	case "email":
		a, err := mail.ParseAddress(s)
		ok = err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		ok = err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		ok = err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok = err == nil
	}
	if !ok {
		return fmt.Errorf("must be a valid %s", format)
	}
	return nil
}

func resolve(q *rein.Question, status string, now time.Time) {
	q.Status = status
	at := now
	q.ResolvedAt = &at
}

// Expire moves a pending question past expires_at to expired.
func Expire(q *rein.Question, now time.Time) Transition {
	t := Transition{From: q.Status}
	if q.Status == rein.StatusPending && !now.Before(q.ExpiresAt) {
		resolve(q, rein.StatusExpired, now)
		t.To, t.Cause = rein.StatusExpired, CauseTimeout
	}
	return t
}

// Cancel withdraws a pending question. Terminal questions are left alone.
func Cancel(q *rein.Question, now time.Time) Transition {
	t := Transition{From: q.Status}
	if q.Status == rein.StatusPending {
		resolve(q, rein.StatusCancelled, now)
		t.To, t.Cause = rein.StatusCancelled, CauseCancelled
	}
	return t
}
