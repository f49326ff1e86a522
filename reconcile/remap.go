package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// A changed mapping (a field added, removed, transformed otherwise)
// concerns every record, but an incremental connector reads only the
// records changed since its checkpoint: a field added to the mapping
// would stay empty on every contact whose record does not change. So the
// reconciler keeps, beside the checkpoints, the digest of the mapping
// the connector's records were last read whole under
// (state.Checkpoints.MappingDigest). A pass that finds another mapping reads a
// snapshot of the source instead of its changes: every record once, at
// the connector's pace and within its budget, with progress, and says
// why in the log and on the page. The checkpoint stays where it was (the
// next pass reads the changes since, again: harmless), and the new digest
// is recorded only when the snapshot read completed, so that a pass cut
// short (a crash, the budget) reads the snapshot again next time; records
// already mapped anew are then skipped by their fingerprint.

// remapReason is what progress and the log say of such a pass.
const remapReason = "the mapping changed since the last pass: every record is read once more"

// mappingChanged reports whether the connector's records were read under
// another mapping. A connector with no digest yet records the current one
// when its read starts from the beginning; one that already has a
// checkpoint (a state file from before digests were kept) records it
// without a re-read, since what changed cannot be told.
func (p *pass) mappingChanged(checkpoint string) (bool, error) {
	r := p.r
	have, err := r.opts.Store.Checkpoints.MappingDigest(r.opts.Connector)
	if err != nil {
		return false, err
	}
	now := r.opts.Mapper.Digest()
	switch {
	case have == now:
		return false, nil
	case have == "" && checkpoint != "":
		return false, r.opts.Store.Checkpoints.SetMappingDigest(r.opts.Connector, now)
	case have == "":
		p.digestAfter = now // the read from the beginning reads every record
		return false, nil
	}
	return true, nil
}

// readRemapped reads every record of an incremental connector once, after
// a change of the mapping, and records the new mapping's digest when the
// read completes.
func (p *pass) readRemapped(ctx context.Context) error {
	r := p.r
	digest := r.opts.Mapper.Digest()
	r.log.WithField(logfield.Mapping, digest).Info("mapping changed since the last pass; reading every record once more")
	r.opts.Progress.Reason(remapReason)
	p.report.countTotal(ctx, "", true)
	err := r.opts.Reader.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		if err := p.guardedBatch(ctx, b.Records); err != nil {
			return err
		}
		p.report.progressed(len(b.Records))
		return nil
	})
	if err != nil {
		return fmt.Errorf("read every record after a mapping change: %w", err)
	}
	if err := r.opts.Store.Checkpoints.SetMappingDigest(r.opts.Connector, digest); err != nil {
		return fmt.Errorf("record mapping digest: %w", err)
	}
	r.log.WithField(logfield.Mapping, digest).Info("every record read under the changed mapping")
	return nil
}
