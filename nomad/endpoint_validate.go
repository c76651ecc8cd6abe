package nomad

import "github.com/nomadfork/nomad/structs"

// Validators the rows share.

// atLeastOne is a Validate that refuses a request whose list (count reads its length) is
// empty, with empty as the message.
func atLeastOne[Req any](count func(*Req) int, empty string) func(*Req) error {
	return func(req *Req) error {
		if count(req) == 0 {
			return structs.BadRequest("%s", empty)
		}
		return nil
	}
}

// eachValid is a Validate that refuses a request whose list of items is empty, with empty as
// the message, and then what check refuses of the first item it refuses (check gets the
// item's position, for messages that name it).
func eachValid[Req, T any](items func(*Req) []T, empty string, check func(i int, item T) error) func(*Req) error {
	return func(req *Req) error {
		list := items(req)
		if len(list) == 0 {
			return structs.BadRequest("%s", empty)
		}
		for i, item := range list {
			if err := check(i, item); err != nil {
				return err
			}
		}
		return nil
	}
}
