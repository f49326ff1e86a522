package pipedrive

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

// Get returns the live persons of ids (100 a call).
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	ps, err := s.getPersons(ctx, ids)
	if err != nil {
		return nil, err
	}
	list := make([]person, 0, len(ps))
	for _, id := range ids {
		if p, ok := ps[id]; ok {
			list = append(list, p)
			delete(ps, id)
		}
	}
	return s.records(ctx, list)
}
