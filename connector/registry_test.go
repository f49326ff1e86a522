package connector

import (
	"context"
	"errors"
	"testing"
)

type ownSource struct{ name string }

func (*ownSource) Changes(context.Context, string, BatchFunc) error { return nil }
func (*ownSource) Snapshot(context.Context, BatchFunc) error        { return nil }
func (*ownSource) Close() error                                     { return nil }

func TestOpenFunc(t *testing.T) {
	refused := errors.New("refused")
	open := OpenFunc(func(_ context.Context, opts Options) (*ownSource, error) {
		if opts.Name == "" {
			return nil, refused
		}
		return &ownSource{name: opts.Name}, nil
	})
	src, err := open(context.Background(), Options{Name: "crm"})
	if s, ok := src.(*ownSource); err != nil || !ok || s.name != "crm" {
		t.Errorf("open = %#v, %v; want the package's source named crm", src, err)
	}
	src, err = open(context.Background(), Options{})
	if !errors.Is(err, refused) || src != nil {
		t.Errorf("failed open = %#v, %v; want a nil Source and the error", src, err)
	}
}
