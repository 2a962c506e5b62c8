package checks

import (
	"fmt"
	"strings"
	"testing"
)

// Token-shaped strings are assembled at run time so that this file holds
// none for other scanners to flag.
func fake(prefix string, n int, alphabet string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}

const alnum = "aB3dE5gH7jK9mN2pQ4sT6vW8yZ1cF0hL"

func secretsIn(text string) []string {
	var got []string
	Secrets(NewText([]byte(text)), nil, func(line, col int, _ Severity, msg string) {
		got = append(got, fmt.Sprintf("%d:%d %s", line, col, msg))
	})
	return got
}

func TestSecretsFound(t *testing.T) {
	key := "-----BEGIN " + "RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAxyz0123456789abcdefghij\n", 3) + "-----END RSA PRIVATE KEY-----\n"
	aws := fake("AKIA", 16, "Z7Q2X4R6T3V2B4N6MJ")
	gh := fake("ghp_", 36, alnum)
	gl := fake("glpat-", 20, alnum)
	slack := "xoxb-" + "1234567890123-1234567890123-" + fake("", 24, alnum)
	stripe := fake("sk_live_", 24, alnum)
	google := fake("AIza", 35, alnum+"-_")
	pw := fake("", 16, "Xq9z!kR2w@Lp7#Vm")
	hex := fake("", 32, "0123456789abcdef")
	openaiProj := fake("sk-proj-", 156, alnum+"_-")
	openaiLegacy := fake("sk-", 20, alnum) + "T3BlbkFJ" + fake("", 20, alnum)
	anthropic := fake("sk-ant-api03-", 93, alnum+"_-") + "AA"
	azure := fake("", 86, alnum+"+/") + "=="
	bearer := fake("", 40, alnum)
	twilio := fake("SK", 32, "0123456789abcdef")
	tests := []struct {
		name, text, rule, secret string
		line, col                int
	}{
		{"private key", "# Deploy key\n\n" + key, "private key", key, 3, 1},
		{"aws", "id: " + aws + "\n", "AWS access key", aws, 1, 5},
		{"github", "use " + gh + " here", "GitHub token", gh, 1, 5},
		{"gitlab", "token " + gl, "GitLab token", gl, 1, 7},
		{"slack", slack, "Slack token", slack, 1, 1},
		{"stripe", "key = " + stripe + "\n", "Stripe key", stripe, 1, 7},
		{"google", "maps: " + google + "\n", "Google API key", google, 1, 7},
		{"password", "password: " + pw + "\n", "credential assignment", pw, 1, 11},
		{"api key quoted", `  "api_key": "` + hex + `"`, "credential assignment", hex, 1, 15},
		{"openai project key", "OPENAI_KEY " + openaiProj + "\n", "OpenAI API key", openaiProj, 1, 12},
		{"openai legacy key", "use " + openaiLegacy, "OpenAI API key", openaiLegacy, 1, 5},
		{"anthropic key", "key " + anthropic + "\n", "Anthropic API key", anthropic, 1, 5},
		{"password in a URL", "DATABASE_URL=postgres://user:pass@db.internal:5432/app", "password in a URL", "pass", 1, 30},
		{"password in an https URL", "clone https://deploy:" + hex + "@git.example.org/x.git", "password in a URL", hex, 1, 22},
		{"azure storage", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + azure + ";EndpointSuffix=core.windows.net", "Azure storage account key", azure, 1, 60},
		{"bearer", "curl -H 'Authorization: Bearer " + bearer + "' https://api", "bearer token", bearer, 1, 32},
		{"twilio", "TWILIO_KEY=" + twilio, "Twilio API key", twilio, 1, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := fmt.Sprintf("%d:%d possible %s (%s)", tt.line, tt.col, tt.rule, redact([]byte(tt.secret)))
			got := secretsIn(tt.text)
			if len(got) != 1 || !strings.HasPrefix(got[0], want) {
				t.Errorf("got %q, want one starting %q", got, want)
			}
		})
	}
}

func TestSecretsNotFound(t *testing.T) {
	for _, text := range []string{
		"password: <your password here>",
		"password = ${DB_PASSWORD}",
		"token: $GITHUB_TOKEN",
		"$password = ConvertTo-SecureString \"x\" -AsPlainText",
		"$token = $foreach.Current",
		"api_key: xxxxxxxxxxxxxxxx",
		"secret: changeme-please-1234",
		"The password policy requires rotation every 90 days.",
		"use " + fake("ghp_", 36, alnum) + " here <!-- kbq:allow-secret -->",
		"id: " + fake("AKIA", 16, "Z7Q2X4R6T8V2B4N6MJ") + " # gitleaks:allow",
		"auth: aaaaaaaaaaaa1111",
		"postgres://user:password@localhost:5432/db",
		"postgres://${DB_USER}:${DB_PASSWORD}@localhost/db",
		"https://user:%PASSWORD%@host/x",
		"redis://:****@cache:6379",
		"https://example.com/path@v1.2:3",
		"Authorization: Bearer $GITHUB_TOKEN",
		"Authorization: Bearer <your-token-here>",
		"Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
		"Ask the task runner: SKIP the disk check, SK" + strings.Repeat("z", 32),
		"AccountKey=<storage-account-key>",
		"the sk-proj- prefix marks project keys",
	} {
		if got := secretsIn(text); len(got) != 0 {
			t.Errorf("%q: %v", text, got)
		}
	}
}

func TestSecretMessagesRedact(t *testing.T) {
	secret := fake("ghp_", 36, alnum)
	for _, msg := range secretsIn(secret) {
		if strings.Contains(msg, secret[6:]) {
			t.Errorf("message leaks the secret: %s", msg)
		}
	}
}

func TestSecretsEveryLineOfARule(t *testing.T) {
	// Two keywords of one rule, the later-listed one first in the text,
	// and upper case: every line holding a keyword is scanned.
	pw1 := fake("", 16, "Xq9z!kR2w@Lp7#Vm")
	pw2 := fake("", 18, "Lp7#VmXq9z!kR2w@")
	got := secretsIn("AUTH_KEY=" + pw1 + "\n\nPassword: " + pw2 + "\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "1:10 ") || !strings.HasPrefix(got[1], "3:11 ") {
		t.Errorf("got %q, want secrets at 1:10 and 3:11", got)
	}
}
