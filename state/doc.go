// Package state is what syncd remembers between runs and across crashes:
// per-connector checkpoints, the links between records of other systems
// and workspace contacts, seen webhook ids and the inbox of acknowledged
// webhook events, dead letters, run history, the conflict journal, held
// matches and the on-disk index of workspace contacts used for matching,
// and the webhook signing secrets. It is a single bbolt file
// (go.etcd.io/bbolt) that one process holds at a time.
//
// Every exported operation runs in one bbolt transaction: it happens
// entirely or not at all, even when the process is killed the next instant.
//
// # Domains
//
// A Store is the open file and one small type per domain, all over the
// same bbolt database: Links, Checkpoints, Inbox, DeadLetters,
// FieldWarnings, Matches, HeldDeletes, RefusedDeletes, Runs, Conflicts,
// Reverse, Webhooks, History and Activities (st.Links.Put,
// st.Inbox.Enqueue). Each domain keeps its buckets and the helpers that
// read and write them inside a *bolt.Tx (writeLinks,
// addConflict...). A write that must touch several domains at once
// is one method of the domain that owns the use case, composed of those
// helpers in one transaction: Reverse.Commit (links, reverse-only values,
// the conflict journal and the inbox), Inbox.Enqueue (the seen webhook ids
// and the inbox), Reverse.DeleteLink (a link and its contact's
// reverse-only values). A new domain is a new type and a field of Store,
// never more methods on Store.
//
// # The crash-safety rule
//
// State never runs ahead of the remote systems. Every change goes in this
// order:
//
//  1. the remote write (a create, PATCH or DELETE in the workspace, an
//     INSERT or UPDATE in the other system);
//  2. then, in one transaction, the state that records it (the link with
//     its hashes and times, the cleared dead letter);
//  3. and, for a batch, the checkpoint that follows the batch, committed
//     only after every write of the batch is recorded or set aside as a
//     dead letter.
//
// A crash can therefore only lose the record of a remote write, never
// record a write that did not happen, and the next run repeats at most the
// writes of one batch. Each write is made so that repeating it is
// harmless:
//
//   - creates: before any create, the contact is looked up by its
//     externalId (and a create whose answer was lost is resolved by that
//     same look-up before any retry), so a repeated create finds the
//     contact made the first time and only records the link;
//   - patches are idempotent: they set fields to values, and a repeat with
//     the same values is an echo that the hashes in the link recognise;
//   - deletes are idempotent: deleting what is already gone is success,
//     and Links.Delete of a missing link is not an error;
//   - webhook events are written to the inbox before the receiver answers
//     2xx and removed (Inbox.Ack, Reverse.Commit) only after they are applied, so an
//     acknowledged event is applied at least once, and the dedup on
//     webhook ids plus the ordering by the contact's updatedAt make a
//     second application harmless.
//
// Open refuses a file that is not a bbolt database, or that is truncated,
// with an error naming the path: it never creates a fresh file over
// existing data. The schema version lives in the meta bucket and Open
// migrates older files in one transaction. Damage found later (a value
// that does not decode, a page that makes bbolt fail, panic or fault)
// comes back as a *CorruptError (errors.Is ErrCorrupt) naming the file and
// how to recover; it never crashes the process. Before bbolt reads a page
// Open walks the file's page structure (checkPages: every page reached
// once, of the right kind, elements inside it, children and free pages
// below the high-water mark, none both free and in use), reading each
// page in use once (about 40 ms for 38 MB, 200,000 links): bbolt trusts
// page ids, and a damaged one that points back up the tree makes its
// cursors, and its own Check, descend forever. Open does not run bbolt's
// full consistency check (Check also compares the keys of every page).
package state
