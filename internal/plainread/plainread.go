package plainread

import (
	"errors"
	"fmt"
)

// errNotRegular is ReadFile's refusal of a directory, a device or a
// named pipe.
var errNotRegular = errors.New("not a regular file")

// TooLargeError is ReadFile's refusal of a file over its limit.
type TooLargeError struct {
	Name  string
	Size  int64 // what fstat said, or what was read before the limit was passed
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the limit of %d", e.Name, e.Size, e.Limit)
}
