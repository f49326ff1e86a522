package mapping

import "testing"

// fuzzTransforms are the transforms a fuzzed chain picks from.
var fuzzTransforms = []string{"trim", "lower", "upper", "e164", "email", "split:;", "join:;", "default:x", "split:,", "join:, "}

// FuzzTransforms runs random chains over random input: no chain panics,
// every normaliser's output is a fixed point of it (so that the canonical
// form is stable and a value read back hashes as the value written), and
// the mapped value of a custom field survives the way back and forth.
func FuzzTransforms(f *testing.F) {
	f.Add("  (415) 555-0100 ", []byte{3})
	f.Add(" Ann <Ann@Example.COM>", []byte{4, 1})
	f.Add("b; a ;;c", []byte{5, 2, 6})
	f.Add("", []byte{7, 0})
	f.Add("a,b", []byte{8, 9, 5})
	f.Fuzz(func(t *testing.T, in string, picks []byte) {
		if len(picks) > 8 {
			picks = picks[:8]
		}
		var chain []step
		for _, p := range picks {
			st, err := parseTransform(fuzzTransforms[int(p)%len(fuzzTransforms)])
			if err != nil {
				t.Fatal(err)
			}
			chain = append(chain, st)
		}
		if checkShapes(chain) != nil {
			return // refused by Compile
		}
		out, err := runChain(scalar(in), chain, "")
		if err != nil {
			return
		}
		for _, s := range out.each() {
			if p, err := NormalizePhone(s, ""); err == nil {
				if q, err := NormalizePhone(p, ""); err != nil || q != p {
					t.Fatalf("NormalizePhone not idempotent: %q -> %q -> %q, %v", s, p, q, err)
				}
			}
			if e, err := NormalizeEmail(s); err == nil {
				if g, err := NormalizeEmail(e); err != nil || g != e {
					t.Fatalf("NormalizeEmail not idempotent: %q -> %q -> %q, %v", s, e, g, err)
				}
			}
		}
		custom := target{key: "custom.k", kind: kindCustom, label: "k"}
		c1, _ := canonical(custom, out, "")
		if c2 := canonicalMulti(splitMulti(c1)); c2 != c1 {
			t.Fatalf("canonical custom value not stable: %q -> %q", c1, c2)
		}
		// The way back and forth converges in one step: mapping back and
		// forth a value that has been back and forth once changes nothing,
		// so two-way sync cannot loop. (The first trip may lose what the
		// chain cannot keep: empty elements, a separator inside an element.)
		fd := field{target: custom, steps: chain, reverse: reverseChain(chain), listOut: chainShape(shapeSame, chain) == shapeList}
		trip := func(c string) (string, bool) {
			back, err := fd.reverseValue(c)
			if err != nil {
				t.Fatal(err)
			}
			v, err := runChain(toValue(back), chain, "")
			if err != nil {
				return "", false // default: may feed e164 or email anything
			}
			out, _ := canonical(custom, v, "")
			return out, true
		}
		c3, ok := trip(c1)
		if !ok {
			return
		}
		if c5, ok := trip(c3); !ok || c5 != c3 {
			t.Fatalf("chain %v: %q maps to %q, then %q after a round trip, then %q (ok=%v) after another", chain, in, c1, c3, c5, ok)
		}
	})
}
