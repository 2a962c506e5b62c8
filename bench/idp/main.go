// Command idp stands in for the identity providers kbq serve asks, on
// 127.0.0.1, for bench/auth.sh: an OIDC issuer (its discovery document
// and JWKS, and an access token it signs, printed), and GitHub's REST API
// (/user and /user/repos, 100 repositories a page through Link, the
// repositories of -repos on the last page, for any ghp_ token).
//
//	idp -addr 127.0.0.1:9000 -aud http://127.0.0.1:7419/mcp -groups bench -repos bench/ps1,bench/ps2
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen on `ADDR`")
	aud := flag.String("aud", "", "the audience of the token printed")
	groups := flag.String("groups", "", "the groups claim of the token printed, comma-separated")
	repos := flag.String("repos", "", "the repositories (owner/name) every GitHub token can read, comma-separated")
	pages := flag.Int("pages", 3, "pages of /user/repos, the last holding -repos")
	flag.Parse()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	check(err)
	base := "http://" + *addr
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": base, "jwks_uri": base + "/jwks",
			"authorization_endpoint": base + "/auth", "token_endpoint": base + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "bench", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ghp_") {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"login": strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ghp_")})
	})
	mux.HandleFunc("/user/repos", func(w http.ResponseWriter, r *http.Request) {
		page := 1
		fmt.Sscan(r.URL.Query().Get("page"), &page)
		var out []map[string]string
		if page < *pages {
			for i := range 100 {
				out = append(out, map[string]string{"full_name": fmt.Sprintf("elsewhere/repo%d-%d", page, i)})
			}
			w.Header().Set("Link", fmt.Sprintf(`<%s/user/repos?per_page=100&page=%d>; rel="next"`, base, page+1))
		} else {
			for _, name := range strings.Split(*repos, ",") {
				out = append(out, map[string]string{"full_name": name})
			}
		}
		json.NewEncoder(w).Encode(out)
	})
	claims := map[string]any{"iss": base, "aud": *aud, "sub": "bench", "exp": time.Now().Add(24 * time.Hour).Unix(), "iat": time.Now().Unix()}
	if *groups != "" {
		claims["groups"] = strings.Split(*groups, ",")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "bench").WithType("JWT"))
	check(err)
	payload, _ := json.Marshal(claims)
	sig, err := signer.Sign(payload)
	check(err)
	token, err := sig.CompactSerialize()
	check(err)
	fmt.Println(token)
	check(http.ListenAndServe(*addr, mux))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "idp:", err)
		os.Exit(1)
	}
}
