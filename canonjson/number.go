package canonjson

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxSafeInteger is the largest integer every JSON reader holds exactly
// (2^53, as an IEEE double): a larger one is refused.
const MaxSafeInteger = 1 << 53

// ParseNumber returns an int64 for integers within ±2^53 and a float64 for
// other numbers whose value a double holds exactly as written (after
// rounding to the shortest decimal that reads back as the same double).
// Anything else is refused: a number that a double cannot carry would be
// read, canonicalised and hashed as a different one, and two different
// actions would share an action hash. Negative zero is refused too: the
// canonical form writes it as 0. Numbers are values, so 1, 1.0 and 1e0
// are the same argument (written 1 in the canonical form).
func ParseNumber(n json.Number) (any, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		i, err := n.Int64()
		if err != nil || i > MaxSafeInteger || i < -MaxSafeInteger {
			return nil, fmt.Errorf("integer %.40s is too large to be exact in JSON; send it as a string", s)
		}
		if i == 0 && s[0] == '-' {
			return nil, negativeZero(s)
		}
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %.40s is out of range; send it as a string", s)
	}
	if f == 0 && math.Signbit(f) && isZero(s) {
		return nil, negativeZero(s)
	}
	if short := strconv.FormatFloat(f, 'g', -1, 64); !SameDecimal(s, short) {
		return nil, fmt.Errorf("number %.40s cannot be kept exactly: as a JSON number (an IEEE double) it reads as %s, and would be checked and hashed as that; send it as a string, or with at most 17 significant digits", s, short)
	}
	return f, nil
}

func negativeZero(s string) error {
	return fmt.Errorf("number %.40s is a negative zero, which canonical JSON writes as 0; send 0", s)
}

// isZero reports whether a JSON number's digits are all zeros.
func isZero(s string) bool {
	m, _, _ := strings.Cut(strings.ToLower(s), "e")
	return strings.Trim(m, "-+0.") == ""
}

// SameDecimal reports whether two decimal numbers (JSON or Go 'g' syntax)
// have the same value, comparing their digits exactly.
func SameDecimal(a, b string) bool {
	an, ad, ae, aok := decimalParts(a)
	bn, bd, be, bok := decimalParts(b)
	return aok && bok && ad == bd && (ad == "" || an == bn && ae == be)
}

// decimalParts reads a decimal number as sign, significant digits (no
// leading or trailing zeros; "" for zero) and the power of ten of the last
// digit.
func decimalParts(s string) (neg bool, digits string, exp int, ok bool) {
	neg = strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		n, err := strconv.Atoi(e)
		if err != nil || n > 1<<20 || n < -(1<<20) {
			return false, "", 0, false
		}
		exp = n
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits = strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	return neg, trimmed, exp, true
}
