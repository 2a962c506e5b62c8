//go:build !linux

package compiler

import "errors"

// exchangeDirs is not available here; replaceDir falls back to two renames.
func exchangeDirs(a, b string) error {
	return errors.New("atomic exchange is not supported")
}
