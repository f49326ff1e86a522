package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// WebhookEventsFor are the events the configuration asks the workspace
// to deliver, and nothing more: the contact events when a connector acts
// on workspace changes, and for each kind a connector's activities log,
// its events (calls: call.completed; summaries, transcripts, recordings:
// their call.*.completed; messages: message.received and
// message.delivered). A configuration asking for none gets the contact
// events, as before activities existed.
func WebhookEventsFor(cfg *config.Config) []string {
	want := map[string]bool{}
	for _, cc := range cfg.Connectors {
		if cc.ReadsWorkspace() {
			want[workspace.EventContactUpdated], want[workspace.EventContactDeleted] = true, true
		}
		for _, k := range cc.Activities.Log {
			for _, ev := range activityEvents[k] {
				want[ev] = true
			}
		}
	}
	if len(want) == 0 {
		return slices.Clone(WebhookEvents)
	}
	var out []string
	for _, ev := range append(slices.Clone(WebhookEvents), workspace.ActivityEvents...) {
		if want[ev] {
			out = append(out, ev)
		}
	}
	return out
}

// activityEvents are the events of each kind a connector may log.
var activityEvents = map[policy.ActivityLog][]string{
	policy.LogCalls:       {workspace.EventCallCompleted},
	policy.LogSummaries:   {workspace.EventCallSummaryCompleted},
	policy.LogTranscripts: {workspace.EventCallTranscriptCompleted},
	policy.LogRecordings:  {workspace.EventCallRecordingCompleted},
	policy.LogMessages:    {workspace.EventMessageReceived, workspace.EventMessageDelivered},
}

// activityTypes are the event types the receiver queues for the activity
// direction.
func (d *Daemon) activityTypes() []string {
	var out []string
	for _, ev := range WebhookEventsFor(d.cfg) {
		if slices.Contains(workspace.ActivityEvents, ev) {
			out = append(out, ev)
		}
	}
	return out
}

// activityTargets are the connectors whose activities log something and
// whose source can write activities (validate refuses the others); an
// entry of activities.log the source cannot log refuses the start.
func (d *Daemon) activityTargets(sched *schedule) ([]*activity.Target, error) {
	var out []*activity.Target
	for _, c := range d.connectors {
		if !c.Config.Activities.Enabled() {
			continue
		}
		w, ok := c.Source.(connector.ActivityWriter)
		if !ok {
			c.log.Warn("activities are configured but the connector cannot write them; none are logged")
			continue
		}
		if err := activity.CheckKinds(c.Name, w, c.Config.Activities.Log); err != nil {
			return nil, err
		}
		t := &activity.Target{Name: c.Name, Writer: w, Log: slices.Clone(c.Config.Activities.Log)}
		if c.Config.Activities.UnknownNumbers == policy.UnknownCreate {
			t.Create = d.recordCreator(c, sched)
		}
		out = append(out, t)
	}
	return out, nil
}

// NewActivityLogger returns the activity direction over the daemon's
// state and connectors, nil when no connector logs activities.
func (d *Daemon) NewActivityLogger() (*activity.Logger, error) { return d.newActivityLogger(nil) }

// newActivityLogger is NewActivityLogger whose record creations poke
// sched's triggers of their connector (its forward pass links the new
// record).
func (d *Daemon) newActivityLogger(sched *schedule) (*activity.Logger, error) {
	targets, err := d.activityTargets(sched)
	if err != nil || len(targets) == 0 {
		return nil, err
	}
	return activity.New(activity.Options{Queue: d.store.Activities, Store: activity.StoreOf(d.store), Targets: targets,
		Workspace: d.ws, WebhookURL: d.cfg.Webhooks.PublicURL, Log: logrus.NewEntry(d.log)})
}

// startActivities handles what the queue holds from an earlier run and
// adds the logger to r's services.
func (d *Daemon) startActivities(ctx context.Context, r *Running, lg *activity.Logger) {
	if err := lg.Drain(ctx); err != nil {
		logrus.NewEntry(d.log).WithField(logfield.Component, "activity").WithError(err).
			Warn("logging the queued activities at start-up failed; the logger goes on trying")
	}
	r.add(&service{name: "activity logger", serve: lg.Run})
}

// recordCreator makes a record for a number no link knows
// (unknownNumbers: create): the contact the number would be, mapped back
// to the connector's fields (its phone, and its name as the number),
// created through the connector's writer; the forward pass then makes
// its contact and link, as for any new record.
func (d *Daemon) recordCreator(c *Connector, sched *schedule) func(ctx context.Context, number string) (string, error) {
	return func(ctx context.Context, number string) (string, error) {
		w, ok := c.Source.(connector.Writer)
		if !ok || !c.Type.Writable {
			return "", fmt.Errorf("connector %s cannot create records", c.Name)
		}
		label := ""
		for _, tgt := range c.Mapper.ReverseTargets() {
			if l, ok := strings.CutPrefix(tgt, "phoneNumbers."); ok {
				label = l
				break
			}
		}
		if label == "" {
			return "", &connector.RefusedError{Reason: "no phone number field flows back to " + c.Name}
		}
		name := number
		contact := workspace.Contact{DefaultFields: workspace.DefaultFields{FirstName: &name,
			PhoneNumbers: []workspace.Item{{Name: label, Value: number}}}}
		fields, err := c.Mapper.ToRecord(c.Mapper.FromContact(contact))
		if err != nil {
			return "", &connector.RefusedError{Reason: err.Error(), Err: err}
		}
		res, err := c.guard.Writer(w).Write(ctx, []connector.Change{{Op: connector.OpCreate, Fields: fields}})
		if err != nil {
			return "", err
		}
		if len(res) != 1 {
			return "", fmt.Errorf("create a record: %d results for one change", len(res))
		}
		if res[0].Err != nil {
			return "", res[0].Err
		}
		if sched != nil {
			sched.pokeAll(c)
		}
		return res[0].ID, nil
	}
}

// RunActivitiesOnce catches the activity direction up and handles its
// queue once (`run --once`); it reports what the logger did. Nothing
// happens when no connector logs activities.
func (d *Daemon) RunActivitiesOnce(ctx context.Context) (activity.Stats, error) {
	lg, err := d.NewActivityLogger()
	if err != nil || lg == nil {
		return activity.Stats{}, err
	}
	_, cerr := lg.CatchUp(ctx)
	derr := lg.Drain(ctx)
	return lg.Stats(), errors.Join(cerr, derr)
}
