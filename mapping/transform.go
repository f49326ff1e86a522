package mapping

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A transform changes a value on its way from the record to the contact.
// Each declares its reverse, the step applied on the way back, so that the
// reverse mapping is derived from the same list and never kept apart:
//
//	trim, lower, upper, e164, email  the canonical value is what the
//	                                 workspace holds, so it is written
//	                                 back unchanged
//	split:<sep>                      string to list; back: join:<sep>
//	join:<sep>                       list to string; back: split:<sep>
//	pick:<n>                         the n-th value of a list (1 is the
//	                                 first), none when it is shorter;
//	                                 only to the workspace: the way back
//	                                 could not put the others back
//	default:<value>                  <value> when empty; back: nothing
type transformDef struct {
	name string
	// arg is the meaning of the text after "name:", "" when the transform
	// takes none.
	arg string
	// reverse names the transform applied on the way back, with the same
	// argument; "" means none.
	reverse string
	// shape is the value's shape after the transform: shapeSame keeps it.
	shape shape
	apply func(v value, arg, region string) (value, error)
	// check, when set, checks the argument.
	check func(arg string) error
	// oneWay is true when the transform has no way back at all: a field
	// using it may flow to the workspace only.
	oneWay bool
}

// shape is what a value is known to be at a point of a transform chain.
type shape int

const (
	shapeSame   shape = iota // unchanged by the step (unknown at the start)
	shapeScalar              // one string
	shapeList                // a list of strings
)

var transformDefs = map[string]transformDef{
	"trim":    {name: "trim", apply: eachString(func(s, _ string) (string, error) { return strings.TrimSpace(s), nil })},
	"lower":   {name: "lower", apply: eachString(func(s, _ string) (string, error) { return strings.ToLower(s), nil })},
	"upper":   {name: "upper", apply: eachString(func(s, _ string) (string, error) { return strings.ToUpper(s), nil })},
	"e164":    {name: "e164", apply: eachString(NormalizePhone)},
	"email":   {name: "email", apply: eachString(func(s, _ string) (string, error) { return NormalizeEmail(s) })},
	"split":   {name: "split", arg: "separator", reverse: "join", shape: shapeList, apply: applySplit},
	"join":    {name: "join", arg: "separator", reverse: "split", shape: shapeScalar, apply: applyJoin},
	"default": {name: "default", arg: "value", apply: applyDefault},
	"pick":    {name: "pick", arg: "position", shape: shapeScalar, apply: applyPick, check: checkPick, oneWay: true},
}

// transformNames lists the known transforms for messages.
func transformNames() string {
	names := make([]string, 0, len(transformDefs))
	for n, d := range transformDefs {
		if d.arg != "" {
			n += ":<" + d.arg + ">"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// step is one transform of a compiled chain.
type step struct {
	def transformDef
	arg string
}

func (s step) String() string {
	if s.def.arg != "" {
		return s.def.name + ":" + s.arg
	}
	return s.def.name
}

// parseTransform compiles one transform of a field's list.
func parseTransform(spec string) (step, error) {
	name, arg, hasArg := strings.Cut(spec, ":")
	def, ok := transformDefs[name]
	if !ok {
		return step{}, fmt.Errorf("unknown transform %q (known: %s)", spec, transformNames())
	}
	if def.arg == "" && hasArg {
		return step{}, fmt.Errorf("transform %q takes no argument", name)
	}
	if def.arg != "" && arg == "" {
		return step{}, fmt.Errorf("transform %q needs a %s: write %s:<%s>", name, def.arg, name, def.arg)
	}
	if def.check != nil {
		if err := def.check(arg); err != nil {
			return step{}, fmt.Errorf("transform %q: %w", spec, err)
		}
	}
	return step{def: def, arg: arg}, nil
}

// reverseChain derives the way back of a forward chain: each step's
// reverse, last step first.
func reverseChain(forward []step) []step {
	var out []step
	for i := len(forward) - 1; i >= 0; i-- {
		if r := forward[i].def.reverse; r != "" {
			out = append(out, step{def: transformDefs[r], arg: forward[i].arg})
		}
	}
	return out
}

// chainShape is the shape of a value after the chain, starting from in.
func chainShape(in shape, chain []step) shape {
	s := in
	for _, st := range chain {
		if st.def.shape != shapeSame {
			s = st.def.shape
		}
	}
	return s
}

// checkShapes refuses chains whose way back could not undo them: a split
// of what is already a list, or a join of what is already one string.
func checkShapes(chain []step) error {
	s := shapeSame
	for i, st := range chain {
		switch {
		case st.def.name == "default" && i > 0:
			// A default after other steps escapes them (upper, split,
			// ...): the field would take a value the chain cannot give,
			// and two-way sync would not settle in one trip.
			return fmt.Errorf("%s must be the first transform, so that the others apply to the default too", st)
		case st.def.name == "split" && s == shapeList:
			return fmt.Errorf("%s follows a split: the value is already a list", st)
		case st.def.name == "join" && s == shapeScalar:
			return fmt.Errorf("%s follows a join: the value is already a single string", st)
		}
		if st.def.shape != shapeSame {
			s = st.def.shape
		}
	}
	return nil
}

// runChain applies the steps in order.
func runChain(v value, chain []step, region string) (value, error) {
	for _, st := range chain {
		var err error
		if v, err = st.def.apply(v, st.arg, region); err != nil {
			return value{}, err
		}
	}
	return v, nil
}

// eachString lifts a string function to values, applied to each element
// of a list.
func eachString(f func(s, region string) (string, error)) func(value, string, string) (value, error) {
	return func(v value, _, region string) (value, error) {
		if !v.isList {
			s, err := f(v.s, region)
			return scalar(s), err
		}
		out := make([]string, len(v.list))
		for i, s := range v.list {
			var err error
			if out[i], err = f(s, region); err != nil {
				return value{}, err
			}
		}
		return listOf(out), nil
	}
}

// applySplit cuts a string at sep into its trimmed, non-empty parts; the
// elements of a list are each cut and the parts kept in order.
func applySplit(v value, sep, _ string) (value, error) {
	var out []string
	for _, s := range v.each() {
		for _, p := range strings.Split(s, sep) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return listOf(out), nil
}

// applyJoin joins a list's non-empty elements with sep; a string is kept.
func applyJoin(v value, sep, _ string) (value, error) {
	if !v.isList {
		return v, nil
	}
	return scalar(strings.Join(v.each(), sep)), nil
}

// applyDefault replaces an empty value (nothing but white space) by def.
func applyDefault(v value, def, _ string) (value, error) {
	if v.empty() {
		return scalar(def), nil
	}
	return v, nil
}

// checkPick accepts a position from 1.
func checkPick(arg string) error {
	if n, err := strconv.Atoi(arg); err != nil || n < 1 {
		return fmt.Errorf("position %q is not a number from 1 (pick:1 is the first value)", arg)
	}
	return nil
}

// applyPick is the arg-th non-empty value of a list (a string is a list
// of one), "" when there are fewer: so that one cell holding several
// e-mail addresses or phone numbers (Google Contacts' "a ::: b") can
// give each to a target of its own.
func applyPick(v value, arg, _ string) (value, error) {
	n, _ := strconv.Atoi(arg)
	e := v.each()
	if n < 1 || n > len(e) {
		return scalar(""), nil
	}
	return scalar(e[n-1]), nil
}
