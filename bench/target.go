package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Target is one kind of server: where a check goes, how it is written, and
// how the decision is read from the answer.
type Target struct {
	Name   string // "rein" or "opa"
	URL    string // the endpoint every check is posted to
	Header http.Header
	// Body appends the request body of one check to dst.
	Body func(dst []byte, it *Item, args, session string) []byte
	// Decode reads the decision (and the deciding rule) from a 200 answer.
	Decode func(body []byte) (Answer, error)
}

// Answer is what a server decided.
type Answer struct {
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
}

// Rein is a rein server: POST /v1/check with an agent key.
func Rein(server, key string) *Target {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer "+key)
	return &Target{
		Name: "rein", URL: strings.TrimRight(server, "/") + "/v1/check", Header: h,
		Body: func(dst []byte, it *Item, args, session string) []byte {
			return checkBody(dst, it.Tool, args, session)
		},
		Decode: func(body []byte) (Answer, error) {
			var a Answer
			err := json.Unmarshal(body, &a)
			if err == nil && a.Decision == "" {
				err = fmt.Errorf("no decision in %.200s", body)
			}
			return a, err
		},
	}
}

// OPA is an Open Policy Agent server: POST /v1/data/<path> with the check
// as input. The policy at path answers {"decision": ..., "rule": ...}.
func OPA(server, path string) *Target {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &Target{
		Name: "opa", URL: strings.TrimRight(server, "/") + "/v1/data/" + strings.Trim(path, "/"), Header: h,
		Body: func(dst []byte, it *Item, args, session string) []byte {
			dst = append(dst, `{"input":`...)
			dst = checkBody(dst, it.Tool, args, session)
			return append(dst, '}')
		},
		Decode: func(body []byte) (Answer, error) {
			var r struct {
				Result *Answer `json:"result"`
			}
			err := json.Unmarshal(body, &r)
			switch {
			case err != nil:
				return Answer{}, err
			case r.Result == nil || r.Result.Decision == "":
				return Answer{}, fmt.Errorf("no decision in %.200s (is the policy loaded at this path?)", body)
			}
			return *r.Result, nil
		},
	}
}

// checkBody appends {"tool":..,"args":..,"session":..}. Tools and sessions
// are plain ASCII names, so quoting them needs no escaping beyond Go's.
func checkBody(dst []byte, tool, args, session string) []byte {
	dst = append(dst, `{"tool":`...)
	dst = appendString(dst, tool)
	dst = append(dst, `,"args":`...)
	dst = append(dst, args...)
	dst = append(dst, `,"session":`...)
	dst = appendString(dst, session)
	return append(dst, '}')
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}
