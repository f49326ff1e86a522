package activity

import (
	"context"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/workspace"
)

// ownerEmail returns the e-mail of the workspace user who made or took
// the call or sent the text (GET /v1/users/{userId}), remembered for the
// process's life; "" when the item names no user, the workspace has no
// such user, or it cannot be asked now (the activity is then written
// without an owner, and gets one when a later write of it knows it).
func (l *Logger) ownerEmail(ctx context.Context, it *Item) string {
	var id string
	switch {
	case it.Call != nil:
		id = it.Call.UserID
	case it.Message != nil:
		id = it.Message.UserID
	}
	if id == "" || l.opts.Workspace == nil {
		return ""
	}
	l.mu.Lock()
	email, ok := l.emails[id]
	l.mu.Unlock()
	if ok {
		return email
	}
	u, err := l.opts.Workspace.User(ctx, id)
	switch {
	case err == nil:
		email = u.Email
	case workspace.IsNotFound(err):
	default:
		l.log.WithError(err).WithField(logfield.Key, id).Debug("workspace user not read; the activity has no owner for now")
		return ""
	}
	l.mu.Lock()
	l.emails[id] = email
	l.mu.Unlock()
	return email
}
