package pgtest

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// fatalTB records the failure of a test helper and stops its goroutine,
// as testing.T.Fatalf does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestConnectFailsSayingHowToStartTheServer(t *testing.T) {
	const url = "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5"
	t.Setenv(EnvURL, url)
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Connect(f)
		f.msg = "returned"
	}()
	<-done
	for _, want := range []string{url, "pg_ctlcluster --skip-systemctl-redirect 15 main start", EnvURL} {
		if !strings.Contains(f.msg, want) {
			t.Errorf("failure %q does not mention %q", f.msg, want)
		}
	}
}

func TestSchemaIsUniqueAndDropped(t *testing.T) {
	pool := Connect(t)
	var name string
	t.Run("Inner Test/with ünicode", func(t *testing.T) {
		name = NewSchema(t, pool)
		if !regexp.MustCompile(`^[a-z0-9_]{1,63}$`).MatchString(name) {
			t.Errorf("schema name %q is not a plain identifier", name)
		}
		if other := Name(t, "t_"); other == name {
			t.Errorf("two names for one test are equal: %q", name)
		}
		Exec(t, pool, "CREATE TABLE "+name+".x (id int)")
	})
	var exists bool
	if err := pool.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("schema %s survived its test", name)
	}
}
