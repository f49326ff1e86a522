package activity

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
)

// KindOf returns the kind of activity what k logs goes into: texts into
// a message's, calls and a call's summary, transcript and recording into
// a call's.
func KindOf(k policy.ActivityLog) connector.ActivityKind {
	if k == policy.LogMessages {
		return connector.ActivityMessage
	}
	return connector.ActivityCall
}

// KindProblems returns a problem, with its path
// (connectors[name].activities.log[i]), for each entry of log whose kind
// w cannot log, naming the kinds it can. validate and the run's start
// both refuse them.
func KindProblems(name string, w connector.ActivityWriter, log []policy.ActivityLog) []string {
	can := w.ActivityKinds()
	var out []string
	for i, k := range log {
		kind := KindOf(k)
		if slices.Contains(can, kind) {
			continue
		}
		names := make([]string, len(can))
		for j, c := range can {
			names[j] = string(c) + "s"
		}
		canSay := "nothing"
		if len(names) > 0 {
			canSay = strings.Join(names, " and ")
		}
		out = append(out, fmt.Sprintf("connectors[%s].activities.log[%d]: this connector cannot log %s (it goes into a %s activity); it can log %s: remove %s",
			name, i, k, kind, canSay, k))
	}
	return out
}

// CheckKinds is KindProblems as an error (nil when w logs every kind
// of log).
func CheckKinds(name string, w connector.ActivityWriter, log []policy.ActivityLog) error {
	var errs []error
	for _, p := range KindProblems(name, w, log) {
		errs = append(errs, errors.New(p))
	}
	return errors.Join(errs...)
}
