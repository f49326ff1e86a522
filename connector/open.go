package connector

import (
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Prepare starts a Type's Open: opts.Settings must be a T (the type's
// settings pointer, as its NewSettings returns) without problems. It
// returns them and the connector's logger: opts.Log (the standard
// logger when nil) with the connector's name and type.
func Prepare[T Settings](opts Options, typeName string) (T, *logrus.Entry, error) {
	var zero T
	set, ok := opts.Settings.(T)
	if !ok || any(set) == any(zero) {
		return zero, nil, fmt.Errorf("open %s connector %s: settings are %T, not %T", typeName, opts.Name, opts.Settings, zero)
	}
	if errs := set.Validate(); len(errs) > 0 {
		return zero, nil, fmt.Errorf("open %s connector %s: %w", typeName, opts.Name, errors.Join(errs...))
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	return set, log.WithFields(logrus.Fields{logfield.Connector: opts.Name, logfield.Type: typeName}), nil
}
