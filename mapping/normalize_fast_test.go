package mapping

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFastPhoneMatchesTheLibrary: wherever the fast path gives a number,
// the phone number library gives the same one, and the fast path takes
// the common forms.
func TestFastPhoneMatchesTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 13))
	pick := func(s string) byte { return s[r.IntN(len(s))] }
	fast := 0
	for i := range 200_000 {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte('+')
		}
		n := 6 + r.IntN(8)
		for range n {
			switch r.IntN(6) {
			case 0:
				b.WriteByte(pick(" ()-.x#/+"))
			case 1:
				b.WriteByte(pick("01"))
			default:
				b.WriteByte(pick("0123456789"))
			}
		}
		s := strings.TrimSpace(b.String())
		region := []string{"US", "CA", "us", "GB", "FR", "AG", "JM"}[i%7]
		if s == "" {
			continue
		}
		got, ok := fastPhone(s, region)
		if !ok {
			continue
		}
		fast++
		want, err := parsePhone(s, region)
		if err != nil || got != want {
			t.Fatalf("%q in %s: fast path %q, library %q (%v)", s, region, got, want, err)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d generated numbers took the fast path", fast)
	}
	for _, s := range []string{"(415) 555-0100", "+1 415 555 0100", "1-415-555-0100", "415.555.0100", "+14155550100"} {
		if _, ok := fastPhone(s, "US"); !ok {
			t.Errorf("%q does not take the fast path", s)
		}
	}
	for _, s := range []string{"(415) 555-0100", "1-415-555-0100"} {
		if _, ok := fastPhone(s, "GB"); ok {
			t.Errorf("%q read in GB takes the fast path", s)
		}
	}
}

// TestFastEmailMatchesNetMail: wherever the fast path gives an address,
// net/mail's path gives the same one.
func TestFastEmailMatchesNetMail(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 13))
	const odd = "@\"()<> \\!#,;:[]\x00\xc3"
	word := func(alphabet string) string {
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
			if r.IntN(40) == 0 {
				b[i] = odd[r.IntN(len(odd))]
			}
		}
		return string(b)
	}
	fast := 0
	for range 300_000 {
		s := strings.TrimSpace(word("aZz09._%+-") + "@" + word("aZ09.-"))
		if s == "" {
			continue
		}
		got, ok := fastEmail(s)
		if !ok {
			continue
		}
		fast++
		want, err := parseEmail(s)
		if err != nil || got != want {
			t.Fatalf("%q: fast path %q, net/mail %q (%v)", s, got, want, err)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d generated addresses took the fast path", fast)
	}
	for _, s := range []string{"Ada.Lovelace@Example.COM", "a+b@x.co.uk", "o'neil@x.com"} {
		_, ok := fastEmail(s)
		want := s != "o'neil@x.com" // ' is left to net/mail
		if ok != want {
			t.Errorf("%q: fast path %v, want %v", s, ok, want)
		}
	}
}

// TestKnownE164SkipsTheLibrary: a number the library gave once is read
// back from memory as itself, in any region; an unseen one is not.
func TestKnownE164SkipsTheLibrary(t *testing.T) {
	got, err := NormalizePhone("07911 123456", "GB")
	if err != nil || got != "+447911123456" {
		t.Fatalf("NormalizePhone = %q, %v", got, err)
	}
	if !knownE164("+447911123456") {
		t.Fatal("the library's result is not remembered")
	}
	for _, region := range []string{"GB", "US", "FR"} {
		if again, err := NormalizePhone(" +447911123456 ", region); err != nil || again != got {
			t.Errorf("in %s: %q, %v", region, again, err)
		}
	}
	if knownE164("+33612345678") {
		t.Error("an unseen number is known")
	}
}
