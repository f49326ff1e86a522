package mapping

import (
	"reflect"
	"strings"
	"testing"
)

func TestTransforms(t *testing.T) {
	tests := []struct {
		name    string
		chain   []string
		region  string
		in      value
		want    value
		wantErr string
	}{
		{name: "trim", chain: []string{"trim"}, in: scalar("  a b \t"), want: scalar("a b")},
		{name: "lower", chain: []string{"lower"}, in: scalar("ÀbC"), want: scalar("àbc")},
		{name: "upper", chain: []string{"upper"}, in: scalar("abc"), want: scalar("ABC")},
		{name: "e164 default region", chain: []string{"e164"}, in: scalar("415 555 0100"), want: scalar("+14155550100")},
		{name: "e164 with region", chain: []string{"e164"}, region: "GB", in: scalar("020 7946 0958"), want: scalar("+442079460958")},
		{name: "e164 invalid", chain: []string{"e164"}, in: scalar("12"), wantErr: "invalid phone number"},
		{name: "e164 on each element", chain: []string{"e164"}, in: listOf([]string{"415 555 0100", "+442079460958"}), want: listOf([]string{"+14155550100", "+442079460958"})},
		{name: "email", chain: []string{"email"}, in: scalar(" Ann@X.COM"), want: scalar("ann@x.com")},
		{name: "email invalid", chain: []string{"email"}, in: scalar("ann"), wantErr: "invalid e-mail"},
		{name: "split", chain: []string{"split:;"}, in: scalar("b; a;;c "), want: listOf([]string{"b", "a", "c"})},
		{name: "split empty", chain: []string{"split:;"}, in: scalar(""), want: listOf(nil)},
		{name: "split multi-char separator", chain: []string{"split: | "}, in: scalar("a | b"), want: listOf([]string{"a", "b"})},
		{name: "split a list flattens", chain: []string{"split:,"}, in: listOf([]string{"a,b", "c"}), want: listOf([]string{"a", "b", "c"})},
		{name: "join", chain: []string{"join:, "}, in: listOf([]string{"a", "", "b"}), want: scalar("a, b")},
		{name: "join a string keeps it", chain: []string{"join:,"}, in: scalar("a"), want: scalar("a")},
		{name: "default on empty", chain: []string{"default:Unknown"}, in: scalar("  "), want: scalar("Unknown")},
		{name: "default keeps value", chain: []string{"default:Unknown"}, in: scalar("Ann"), want: scalar("Ann")},
		{name: "default value may hold colons", chain: []string{"default:a:b"}, in: scalar(""), want: scalar("a:b")},
		{name: "pick the second", chain: []string{"split: ::: ", "pick:2"}, in: scalar("a ::: b ::: c"), want: scalar("b")},
		{name: "pick beyond the list", chain: []string{"split: ::: ", "pick:2"}, in: scalar("a"), want: scalar("")},
		{name: "pick the first of a string", chain: []string{"pick:1"}, in: scalar("a"), want: scalar("a")},
		{name: "chain in order", chain: []string{"trim", "split:/", "upper", "join:+"}, in: scalar(" a/b "), want: scalar("A+B")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chain []step
			for _, s := range tt.chain {
				st, err := parseTransform(s)
				if err != nil {
					t.Fatal(err)
				}
				chain = append(chain, st)
			}
			got, err := runChain(tt.in, chain, tt.region)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.isList != tt.want.isList || got.s != tt.want.s || !reflect.DeepEqual(got.each(), tt.want.each()) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseTransformErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"lowr", `unknown transform "lowr" (known: default:<value>, e164, email, join:<separator>, lower, pick:<position>, split:<separator>, trim, upper)`},
		{"split", `transform "split" needs a separator`},
		{"join:", `transform "join" needs a separator`},
		{"default:", `transform "default" needs a value`},
		{"trim:x", `transform "trim" takes no argument`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := parseTransform(tt.spec)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("parseTransform(%q) = %v, want %q", tt.spec, err, tt.want)
			}
		})
	}
}

func TestReverseChainIsDerived(t *testing.T) {
	var fwd []step
	for _, s := range []string{"trim", "split:;", "lower", "default:x", "join:,", "e164"} {
		st, err := parseTransform(s)
		if err != nil {
			t.Fatal(err)
		}
		fwd = append(fwd, st)
	}
	var got []string
	for _, st := range reverseChain(fwd) {
		got = append(got, st.String())
	}
	want := []string{"split:,", "join:;"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reverse of %v = %v, want %v", fwd, got, want)
	}
	// Every transform with a reverse is undone by it on its own output.
	for name, d := range transformDefs {
		if d.reverse == "" {
			continue
		}
		if transformDefs[d.reverse].reverse != name {
			t.Errorf("%s reverses to %s, which does not reverse to %s", name, d.reverse, name)
		}
	}
}
