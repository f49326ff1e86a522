package pipedrive

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

// renamed shows a Source under the contract suite's field names (name,
// email, phone): it renames record fields on the way out and change
// fields on the way in, and does nothing else.
type renamed struct{ *Source }

func toSuite(f string) string {
	for k, v := range suiteFields {
		if v == f {
			return k
		}
	}
	return f
}

func (r *renamed) batchFn(fn connector.BatchFunc) connector.BatchFunc {
	return func(ctx context.Context, b connector.Batch) error {
		for i, rec := range b.Records {
			out := make(map[string]any, len(rec.Fields))
			for k, v := range rec.Fields {
				out[toSuite(k)] = v
			}
			b.Records[i].Fields = out
		}
		return fn(ctx, b)
	}
}

func (r *renamed) Changes(ctx context.Context, cp string, fn connector.BatchFunc) error {
	return r.Source.Changes(ctx, cp, r.batchFn(fn))
}

func (r *renamed) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return r.Source.Snapshot(ctx, r.batchFn(fn))
}

func (r *renamed) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	out := make([]connector.Change, len(changes))
	for i, c := range changes {
		out[i] = c
		if c.Fields != nil {
			out[i].Fields = map[string]any{}
			for k, v := range c.Fields {
				if f, ok := suiteFields[k]; ok {
					k = f
				}
				out[i].Fields[k] = v
			}
		}
	}
	return r.Source.Write(ctx, out)
}

func (r *renamed) Fields(ctx context.Context) ([]string, error) {
	names, err := r.Source.Fields(ctx)
	for i, n := range names {
		names[i] = toSuite(n)
	}
	return names, err
}
