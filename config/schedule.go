package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MinEvery is the shortest interval an "@every" schedule may have: cron
// runs a shorter one every second anyway, and a pass per second is never
// what an operator meant.
const MinEvery = time.Second

// cronFields names the five fields of a standard cron spec with the count
// of values each takes: a step larger than that fires once at most per
// period and is a typo (*/61 for */6 or */1).
var cronFields = []struct {
	name  string
	count int
}{{"minute", 60}, {"hour", 24}, {"day of month", 31}, {"month", 12}, {"day of week", 7}}

// errNeverFires is a spec that parses but names no time that exists.
var errNeverFires = errors.New("never fires (no such date within five years)")

// CheckSchedule parses spec as the scheduler does (robfig/cron/v3's
// standard parser) and refuses what it would accept but run wrongly: an
// "@every" interval that is negative, zero or below MinEvery (cron runs
// those every second), a step beyond its field's range, and a spec that
// never fires (such as the 31st of February).
func CheckSchedule(spec string) error {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return err
	}
	body := strings.TrimSpace(spec)
	if strings.HasPrefix(body, "TZ=") || strings.HasPrefix(body, "CRON_TZ=") {
		if i := strings.IndexAny(body, " \t"); i >= 0 {
			body = strings.TrimSpace(body[i:])
		}
	}
	if rest, ok := strings.CutPrefix(body, "@every "); ok {
		return checkEvery(strings.TrimSpace(rest))
	}
	if !strings.HasPrefix(body, "@") {
		if err := checkSteps(strings.Fields(body)); err != nil {
			return err
		}
	}
	if sched.Next(time.Now()).IsZero() {
		return errNeverFires
	}
	return nil
}

// checkEvery refuses an "@every" interval below MinEvery.
func checkEvery(d string) error {
	every, err := time.ParseDuration(d)
	if err != nil {
		return err
	}
	switch {
	case every < 0:
		return fmt.Errorf("interval %s is negative", d)
	case every == 0:
		return fmt.Errorf("interval %s is zero", d)
	case every < MinEvery:
		return fmt.Errorf("interval %s is below the floor of %s", d, MinEvery)
	}
	return nil
}

// checkSteps refuses a step ("*/N" or "A-B/N") larger than its field's
// count of values.
func checkSteps(fields []string) error {
	for i, f := range fields {
		if i >= len(cronFields) {
			break
		}
		for _, part := range strings.Split(f, ",") {
			_, step, ok := strings.Cut(part, "/")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(step)
			if err != nil {
				continue // the parser has refused it already
			}
			if fld := cronFields[i]; n > fld.count {
				return fmt.Errorf("step %d of the %s field is out of range (at most %d)", n, fld.name, fld.count)
			}
		}
	}
	return nil
}
