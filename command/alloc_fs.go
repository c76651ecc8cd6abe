package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/nomad/api"
)

// AllocFSCommand lists, stats, prints and follows files of an allocation's directory.
type AllocFSCommand struct {
	Meta

	// Stdout receives file contents and tables; nil means the process's own.
	Stdout io.Writer
}

func (c *AllocFSCommand) Help() string {
	return helpText(`
Usage: nomad alloc fs [options] <allocation> [<path>]

  Look into an allocation's directory on the node that runs it: a directory
  is listed, a file printed. <path> is relative to the allocation directory
  ("/", the default, is the directory itself: alloc/ shared by the tasks, and
  one directory per task). A task's secrets directory is never readable.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters; with -job it is a job ID, and a running allocation of that job
  is picked at random.

  When ACLs are enabled, this needs read-fs and read-job in the allocation's
  namespace.
`, `
FS Options:

  -H
    Machine friendly output: sizes in bytes.

  -verbose
    Show full information (the content type of a file with -stat).

  -job
    Treat <allocation> as a job ID and pick one of its running allocations.

  -stat
    Describe the file or directory instead of printing or listing it.

  -f
    Follow the file: keep printing what is appended until interrupted.

  -tail
    Print the end of the file only: the last 10 lines, or what -n or -c says.

  -n=<lines>
    With -tail, the number of lines to print.

  -c=<bytes>
    With -tail, the number of bytes to print.
`)
}

func (c *AllocFSCommand) Synopsis() string { return "Inspect the contents of an allocation directory" }

func (c *AllocFSCommand) Run(args []string) int {
	var machine, verbose, byJob, stat, follow, tail bool
	var lines, size int64
	fs := c.FlagSet("alloc fs")
	fs.BoolVar(&machine, "H", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&byJob, "job", false, "")
	fs.BoolVar(&stat, "stat", false, "")
	fs.BoolVar(&follow, "f", false, "")
	fs.BoolVar(&tail, "tail", false, "")
	fs.Int64Var(&lines, "n", -1, "")
	fs.Int64Var(&size, "c", -1, "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return c.fail("This command takes one or two arguments: <allocation> [<path>]")
	}
	path := "/"
	if len(pos) == 2 {
		path = pos[1]
	}
	if (lines >= 0 || size >= 0) && !tail {
		return c.fail("-n and -c need -tail")
	}
	if lines >= 0 && size >= 0 {
		return c.fail("-n and -c cannot be used together")
	}
	if stat && (follow || tail) {
		return c.fail("-stat cannot be used with -f or -tail")
	}

	client, alloc, ok := c.clientAlloc(pos[0], byJob)
	if !ok {
		return 1
	}
	q := &api.QueryOptions{Namespace: alloc.Namespace}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}

	info, _, err := client.AllocFS().Stat(alloc, path, q)
	if err != nil {
		return c.fail("Error reading %q: %v", path, err)
	}
	if stat {
		header := "Mode|Size|Modified Time|Name"
		row := fsRow(info, machine)
		if verbose {
			header += "|Content Type"
			row += "|" + info.ContentType
		}
		fmt.Fprintln(out, formatList([]string{header, row}))
		return 0
	}
	if info.IsDir {
		if follow || tail {
			return c.fail("%q is a directory: -f and -tail print files", path)
		}
		files, _, err := client.AllocFS().List(alloc, path, q)
		if err != nil {
			return c.fail("Error listing %q: %v", path, err)
		}
		rows := []string{"Mode|Size|Modified Time|Name"}
		for _, f := range files {
			rows = append(rows, fsRow(f, machine))
		}
		fmt.Fprintln(out, formatList(rows))
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &fsFile{client: client, alloc: alloc, path: path, q: q}
	var read int64
	switch {
	case !tail:
		read, err = f.readAt(out, 0, 0)
	case size >= 0:
		read, err = f.readAt(out, max(info.Size-size, 0), 0)
	default:
		if lines < 0 {
			lines = 10
		}
		last := &lastLines{n: int(lines)}
		read, err = f.readAt(last, 0, 0)
		if err == nil {
			_, err = out.Write(last.buf)
		}
	}
	if err == nil && follow {
		err = f.follow(ctx, out, read)
	}
	if err != nil {
		return c.fail("Error reading %q: %v", path, err)
	}
	return 0
}

// fsRow is one "|"-separated row of a listing or stat table; directories end with "/".
func fsRow(f *api.AllocFileInfo, machine bool) string {
	size := strconv.FormatInt(f.Size, 10)
	if !machine {
		size = iBytes(f.Size)
	}
	name := f.Name
	if f.IsDir && !strings.HasSuffix(name, "/") {
		name += "/"
	}
	return strings.Join([]string{f.FileMode, size, formatTime(f.ModTime), name}, "|")
}

// iBytes is n in IEC units: "12 B", "4.0 KiB", "17 MiB".
func iBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

// fsFile is one allocation file, read through the official client.
type fsFile struct {
	client *api.Client
	alloc  *api.Allocation
	path   string
	q      *api.QueryOptions
}

// readAt writes the file from offset (limit bytes, all with 0) to w and returns how far
// into the file it read.
func (f *fsFile) readAt(w io.Writer, offset, limit int64) (int64, error) {
	rc, err := f.client.AllocFS().ReadAt(f.alloc, f.path, offset, limit, f.q)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	return offset + n, err
}

// follow writes what the file gains after offset until ctx ends or the file is deleted.
func (f *fsFile) follow(ctx context.Context, w io.Writer, offset int64) error {
	frames, errCh := f.client.AllocFS().Stream(f.alloc, f.path, api.OriginStart, offset, ctx.Done(), f.q)
	if frames == nil {
		return <-errCh
	}
	// write reports whether to go on.
	write := func(frame *api.StreamFrame) (bool, error) {
		if frame.FileEvent == "file deleted" {
			return false, nil
		}
		_, err := w.Write(frame.Data)
		return err == nil, err
	}
	for {
		select {
		case frame, ok := <-frames:
			if !ok {
				return nil
			}
			if more, err := write(frame); !more {
				return err
			}
		case err := <-errCh:
			// The client's reader reports the end before it closes the frames: what it
			// decoded before is still to be written.
			for frame := range frames {
				if more, werr := write(frame); !more {
					return werr
				}
			}
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		case <-ctx.Done():
			return nil
		}
	}
}
