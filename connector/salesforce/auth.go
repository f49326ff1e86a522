package salesforce

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/internal/remote"
)

// Token request grant types.
const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	jwtLifetime            = 3 * time.Minute // Salesforce: exp within 3 minutes
	tokenPath              = "/services/oauth2/token"
)

// tokenAnswer is the token endpoint's answer: the access token and the
// instance every API call goes to.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	InstanceURL string `json:"instance_url"`
	TokenType   string `json:"token_type"`
	IssuedAt    string `json:"issued_at"`
}

// TokenError is a refusal of the token endpoint ({error,
// error_description}).
type TokenError struct {
	Status      int
	Code        string // invalid_client, invalid_grant, ...
	Description string
}

func (e *TokenError) Error() string {
	return fmt.Sprintf("salesforce token request: %d %s: %s", e.Status, e.Code, e.Description)
}

// HTTPStatus returns the answer's status.
func (e *TokenError) HTTPStatus() int { return e.Status }

// authenticator obtains access tokens from the login host.
type authenticator struct {
	loginURL     string
	clientID     string
	clientSecret string
	username     string
	audience     string
	key          *rsa.PrivateKey
	http         *http.Client
	now          func() time.Time
	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// tokenAttempts bounds the tries of one token request that failed on
// the way (no answer, or a 5xx); a refusal (4xx) is never tried again.
const tokenAttempts = 3

// fetch asks the token endpoint for a new access token, trying again
// after a failure on the way.
func (a *authenticator) fetch(ctx context.Context) (tokenAnswer, error) {
	var err error
	for n := 1; ; n++ {
		var t tokenAnswer
		if t, err = a.fetchOnce(ctx); err == nil {
			return t, nil
		}
		var te *TokenError
		if (errors.As(err, &te) && te.Status < 500) || n == tokenAttempts || ctx.Err() != nil {
			return tokenAnswer{}, err
		}
		if serr := a.sleep(ctx, time.Duration(n)*time.Second); serr != nil {
			return tokenAnswer{}, err
		}
	}
}

// fetchOnce makes one token request.
func (a *authenticator) fetchOnce(ctx context.Context) (tokenAnswer, error) {
	form := url.Values{}
	if a.key != nil {
		assertion, err := a.assertion()
		if err != nil {
			return tokenAnswer{}, err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", assertion)
	} else {
		form.Set("grant_type", grantClientCredentials)
		form.Set("client_id", a.clientID)
		form.Set("client_secret", a.clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.loginURL+tokenPath, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("salesforce token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := a.http.Do(req)
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("salesforce token request: %w", remote.StripURL(err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("salesforce token request: read answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		return tokenAnswer{}, &TokenError{Status: res.StatusCode, Code: e.Error, Description: e.Description}
	}
	var t tokenAnswer
	if err := json.Unmarshal(body, &t); err != nil || t.AccessToken == "" {
		return tokenAnswer{}, fmt.Errorf("salesforce token request: answer without access_token")
	}
	u, err := url.Parse(t.InstanceURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return tokenAnswer{}, fmt.Errorf("salesforce token request: instance_url %q is not a URL", t.InstanceURL)
	}
	t.InstanceURL = strings.TrimRight(t.InstanceURL, "/")
	return t, nil
}

// assertion is the JWT of the bearer flow: RS256, iss the client id, sub
// the user, aud Salesforce's login host, exp three minutes away.
func (a *authenticator) assertion() (string, error) {
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "RS256"})
	claims, _ := json.Marshal(map[string]any{"iss": a.clientID, "sub": a.username, "aud": a.audience,
		"exp": a.now().Add(jwtLifetime).Unix()})
	unsigned := enc.EncodeToString(head) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(unsigned))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("salesforce token request: sign the JWT: %w", err)
	}
	return unsigned + "." + enc.EncodeToString(sig), nil
}
