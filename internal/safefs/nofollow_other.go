//go:build !unix

package safefs

// Systems without O_NOFOLLOW check for a link after opening.
const noFollow = 0
