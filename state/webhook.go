package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// WebhookSecret is a signing secret of the webhook subscription. After a
// rotation the old secret stays valid until its ExpiresAt.
type WebhookSecret struct {
	WebhookID string    `json:"webhookId"`
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// ExpiresAt is when the secret stops being accepted; zero: never.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

func (ws WebhookSecret) expired(now time.Time) bool {
	return !ws.ExpiresAt.IsZero() && !ws.ExpiresAt.After(now)
}

func webhookSecretKey(webhookID, secret string) []byte {
	return []byte(webhookID + "\x00" + secret)
}

// PutSecret records ws, or updates the entry of the same webhook
// and secret (to set the old secret's ExpiresAt on rotation, for
// instance). CreatedAt defaults to now. Expired secrets are removed in the
// same transaction.
func (s *Webhooks) PutSecret(ws WebhookSecret) error {
	if ws.WebhookID == "" || ws.Secret == "" {
		return fmt.Errorf("put webhook secret: webhook id and secret are required")
	}
	now := s.now()
	if ws.CreatedAt.IsZero() {
		ws.CreatedAt = now
	}
	// The secret never appears in errors or logs: only the webhook id.
	defer s.secrets.changed()
	return s.update("put webhook secret of "+ws.WebhookID, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketWebhookSecrets)
		var expired [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var old WebhookSecret
			if err := unmarshal(v, &old); err != nil {
				return fmt.Errorf("decode webhook secret: %w", err)
			}
			if old.expired(now) {
				expired = append(expired, append([]byte{}, k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(ws)
		if err != nil {
			return err
		}
		return b.Put(webhookSecretKey(ws.WebhookID, ws.Secret), raw)
	})
}

// Secrets returns the secrets that sign valid deliveries now: the
// newest (current) and the others not expired yet, newest first.
// ErrNotFound when there is none. The receiver calls it for every
// delivery, so the decoded secrets are kept in memory until this Store
// writes the bucket again (the state file is locked for one writing
// process, so no one else can).
func (s *Webhooks) Secrets() (current WebhookSecret, previous []WebhookSecret, err error) {
	now := s.now()
	stored, err := s.storedSecrets()
	if err != nil {
		return WebhookSecret{}, nil, err
	}
	var all []WebhookSecret
	for _, ws := range stored {
		if !ws.expired(now) {
			all = append(all, ws)
		}
	}
	if len(all) == 0 {
		return WebhookSecret{}, nil, fmt.Errorf("read webhook secrets: %w", ErrNotFound)
	}
	return all[0], all[1:], nil
}

// storedSecrets returns every stored secret, newest first, from the cache
// when no write went since it was filled. The slice is shared: read only.
func (s *Webhooks) storedSecrets() ([]WebhookSecret, error) {
	gen := s.secrets.gen.Load()
	if c := s.secrets.cached.Load(); c != nil && c.gen == gen {
		return c.secrets, nil
	}
	var all []WebhookSecret
	err := s.view("read webhook secrets", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhookSecrets).ForEach(func(_, v []byte) error {
			var ws WebhookSecret
			if err := unmarshal(v, &ws); err != nil {
				return fmt.Errorf("decode webhook secret: %w", err)
			}
			all = append(all, ws)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].CreatedAt.After(all[j].CreatedAt) })
	s.secrets.cached.Store(&cachedSecrets{gen: gen, secrets: all})
	return all, nil
}

// secretCache holds the decoded webhook secrets. A write of the bucket
// bumps gen after its transaction ended, so an entry filled from a read
// that may have seen the old bucket (it took gen before the bump) is never
// used again.
type secretCache struct {
	gen    atomic.Uint64
	cached atomic.Pointer[cachedSecrets]
}

type cachedSecrets struct {
	gen     uint64
	secrets []WebhookSecret
}

// changed invalidates the cache; called after each write of the bucket,
// whether or not it committed.
func (c *secretCache) changed() { c.gen.Add(1) }

// DeleteSecrets removes every secret of the webhook (after the
// subscription was deleted).
func (s *Webhooks) DeleteSecrets(webhookID string) error {
	defer s.secrets.changed()
	return s.update("delete webhook secrets of "+webhookID, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketWebhookSecrets)
		prefix := []byte(webhookID + "\x00")
		var keys [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, append([]byte{}, k...))
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// keyWebhookRoutes is the meta key of the form of the workspace's webhook
// routes that answered.
var keyWebhookRoutes = []byte("webhookRoutes")

// Routes returns the form of the workspace's webhook routes found
// out before (the workspace client's WebhookRoutesSpec or
// WebhookRoutesV1), or "" when none was recorded.
func (s *Webhooks) Routes() (string, error) {
	var form string
	err := s.view("read webhook routes", func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			form = string(meta.Get(keyWebhookRoutes))
		}
		return nil
	})
	return form, err
}

// PutRoutes records the form of the workspace's webhook routes, so
// that the next start uses it without finding it out again.
func (s *Webhooks) PutRoutes(form string) error {
	if form == "" {
		return fmt.Errorf("put webhook routes: form is required")
	}
	return s.update("put webhook routes", func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(keyWebhookRoutes, []byte(form))
	})
}
