// Package userdir says where kbq keeps a user's own files: their
// configuration, in $KBQ_HOME, else $XDG_CONFIG_HOME/kbq, else
// ~/.config/kbq.
package userdir

import (
	"os"
	"path/filepath"
)

// ConfigFile returns where the user's file name is kept, from the
// environment getenv reads; "" without a home directory.
func ConfigFile(getenv func(string) string, name string) string {
	if h := getenv("KBQ_HOME"); h != "" {
		return filepath.Join(h, name)
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "kbq", name)
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "kbq", name)
	}
	return ""
}
