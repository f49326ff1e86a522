package remote

import "context"

type beforeSendKey struct{}

// WithBeforeSend returns a context whose calls run check after their turn
// came (the pause gate and the rate limiters waited on) and just before
// each attempt is sent: when check returns an error, the call ends with
// it and nothing is sent. A caller that decided a write on what it read
// earlier uses it to look once more, as late as it can, at what may have
// changed since (the rate limiter's wait can be seconds).
func WithBeforeSend(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, beforeSendKey{}, check)
}

// beforeSend runs the context's check, if any.
func beforeSend(ctx context.Context) error {
	if check, ok := ctx.Value(beforeSendKey{}).(func() error); ok && check != nil {
		return check()
	}
	return nil
}
