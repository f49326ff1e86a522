package connector

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Type{}
)

// Register makes a connector type available by name. It is meant to be
// called from a connector package's init and panics on a duplicate or an
// incomplete Type, which are programming errors.
func Register(t Type) {
	if t.Name == "" || t.NewSettings == nil || t.Open == nil {
		panic("connector: Register of an incomplete type")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[t.Name]; dup {
		panic(fmt.Sprintf("connector: type %q registered twice", t.Name))
	}
	registry[t.Name] = t
}

// Lookup returns the registered type of that name.
func Lookup(name string) (Type, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	t, ok := registry[name]
	return t, ok
}

// Types returns the registered type names, sorted.
func Types() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OpenFunc adapts a connector package's Open, which returns the package's
// own source type, to Type.Open. A failed open gives a nil Source.
func OpenFunc[S Source](open func(context.Context, Options) (S, error)) func(context.Context, Options) (Source, error) {
	return func(ctx context.Context, opts Options) (Source, error) {
		src, err := open(ctx, opts)
		if err != nil {
			return nil, err
		}
		return src, nil
	}
}
