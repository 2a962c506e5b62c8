package gitdir

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Origin returns the URL of the repository's origin remote, as its config
// file gives it; "" when it has none.
func (d Dirs) Origin() string {
	f, err := os.Open(filepath.Join(d.Common, "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = strings.EqualFold(strings.Join(strings.Fields(line), " "), `[remote "origin"]`)
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if in && ok && strings.EqualFold(strings.TrimSpace(key), "url") {
			return strings.Trim(strings.TrimSpace(value), `"`)
		}
	}
	return ""
}

// RepoName names a repository by its remote's URL, as host/path without
// a scheme, user or .git: git@github.com:org/repo.git and
// https://github.com/org/repo are both github.com/org/repo. A local path
// gives its last element. It is "" for "".
func RepoName(url string) string {
	u := strings.TrimSpace(url)
	if u == "" {
		return ""
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	if scheme, rest, ok := strings.Cut(u, "://"); ok && !strings.Contains(scheme, "/") {
		if scheme == "file" {
			return path.Base(rest)
		}
		u = rest
		if at := strings.LastIndex(strings.SplitN(u, "/", 2)[0], "@"); at >= 0 {
			u = u[at+1:]
		}
		host, p, _ := strings.Cut(u, "/")
		host, _, _ = strings.Cut(host, ":") // a port
		return host + "/" + p
	}
	// scp-like: [user@]host:path, unless it is a local path.
	if colon := strings.Index(u, ":"); colon > 0 && !strings.ContainsAny(u[:colon], "/\\") {
		host := u[:colon]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		return host + "/" + strings.TrimPrefix(u[colon+1:], "/")
	}
	return filepath.Base(u)
}

// IsLocalURL reports whether a remote's URL is a path on this machine (or
// file://), which names no repository others know.
func IsLocalURL(url string) bool {
	u := strings.TrimSpace(url)
	if scheme, _, ok := strings.Cut(u, "://"); ok && !strings.Contains(scheme, "/") {
		return scheme == "file"
	}
	colon := strings.Index(u, ":")
	drive := colon == 1 && len(u) > 2 && (u[2] == '/' || u[2] == '\\') // C:\repo
	scpLike := colon > 0 && !strings.ContainsAny(u[:colon], "/\\") && !drive
	return u != "" && !scpLike
}
