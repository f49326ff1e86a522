package salesforceemu

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// maxJWTLifetime: Salesforce wants exp within 3 minutes of now.
	maxJWTLifetime = 3 * time.Minute
)

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// TokenCalls returns the number of token requests answered with a token.
func (s *Server) TokenCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenSeq
}

func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/services/oauth2/token" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	status, body := s.tokenLocked(r)
	s.stats.Add(RouteToken, status)
	writeJSON(w, status, body)
}

// FailTokens makes the next n token requests answer 503, as the login
// host does during maintenance.
func (s *Server) FailTokens(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenFails = n
}

func (s *Server) tokenLocked(r *http.Request) (int, any) {
	if s.tokenFails > 0 {
		s.tokenFails--
		return http.StatusServiceUnavailable, oauthError{"temporarily_unavailable", "service temporarily unavailable"}
	}
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, oauthError{"invalid_request", "must use HTTP POST"}
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return http.StatusBadRequest, oauthError{"invalid_request", "grant type not supported"}
	}
	if err := r.ParseForm(); err != nil {
		return http.StatusBadRequest, oauthError{"invalid_request", "invalid request body"}
	}
	switch r.PostForm.Get("grant_type") {
	case "":
		return http.StatusBadRequest, oauthError{"invalid_request", "grant type is missing"}
	case grantClientCredentials:
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if id != s.opts.ClientID || secret != s.opts.ClientSecret {
			return http.StatusBadRequest, oauthError{"invalid_client", "invalid client credentials"}
		}
	case grantJWTBearer:
		if msg := s.checkAssertionLocked(r.PostForm.Get("assertion")); msg != "" {
			return http.StatusBadRequest, oauthError{"invalid_grant", msg}
		}
	default:
		return http.StatusBadRequest, oauthError{"unsupported_grant_type", "grant type not supported"}
	}
	s.tokenSeq++
	tok := fmt.Sprintf("00D5g000000TEST!AQ%06d.salesforceemu", s.tokenSeq)
	s.tokens[tok] = &session{}
	return http.StatusOK, map[string]string{
		"access_token": tok,
		"instance_url": s.InstanceURL,
		"id":           s.LoginURL + "/id/00D5g000000TESTEAW/0055g000000TESTAAA",
		"token_type":   "Bearer",
		"issued_at":    strconv.FormatInt(s.nowLocked().UnixMilli(), 10),
		"signature":    "salesforceemu",
		"scope":        "api",
	}
}

// checkAssertionLocked verifies a JWT bearer assertion: RS256 signed by
// the configured key, iss the client id, sub the user, aud the login
// host, exp in the future and at most 3 minutes away. It returns the
// error description, or "".
func (s *Server) checkAssertionLocked(assertion string) string {
	key, _ := s.opts.JWTKey.(*rsa.PublicKey)
	if key == nil || s.opts.JWTUsername == "" {
		return "user hasn't approved this consumer"
	}
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "invalid assertion"
	}
	var head struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
	}
	if decodePart(parts[0], &head) != nil || decodePart(parts[1], &claims) != nil || head.Alg != "RS256" {
		return "invalid assertion"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "invalid assertion"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return "invalid assertion"
	}
	now := time.Now()
	switch {
	case claims.Iss != s.opts.ClientID:
		return "invalid client credentials"
	case claims.Sub != s.opts.JWTUsername:
		return "user hasn't approved this consumer"
	case claims.Aud != s.LoginURL && claims.Aud != "https://login.salesforce.com" && claims.Aud != "https://test.salesforce.com":
		return "audience is invalid"
	case claims.Exp <= now.Unix() || claims.Exp > now.Add(maxJWTLifetime+time.Minute).Unix():
		return "expired authorization code"
	}
	return ""
}

func decodePart(p string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
