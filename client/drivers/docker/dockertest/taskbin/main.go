// Command taskbin is the only program of the docker driver's test image (FROM scratch).
//
//	taskbin echo TEXT...  prints TEXT on stdout and "err:TEXT" on stderr
//	taskbin exit N        exits with N
//	taskbin cat PATH      prints the file at PATH
//	taskbin write PATH T  writes T to the file at PATH; a failure is printed on stderr, exit 1
//	taskbin sleep         waits; SIGINT makes it print "got interrupt" and exit 3, SIGTERM is ignored
//	taskbin tty [WxH]     prints "tty WxH" when stdin is a terminal, "notty" otherwise; given
//	                      a size, it first waits (up to 10s) for the terminal to have it
//	taskbin httpd -f -p PORT -h DIR
//	                      serves the files of DIR over HTTP on PORT (index.html for a
//	                      directory), in the foreground: busybox httpd's flags, so that a
//	                      job written for a busybox image runs on this one unchanged
package main

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: taskbin echo|exit|cat|write|sleep|tty|httpd")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "echo":
		text := strings.Join(args, " ")
		fmt.Println(text)
		fmt.Fprintln(os.Stderr, "err:"+text)
	case "exit":
		n, _ := strconv.Atoi(args[0])
		os.Exit(n)
	case "cat":
		b, err := os.ReadFile(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	case "write":
		if err := os.WriteFile(args[0], []byte(strings.Join(args[1:], " ")), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "sleep":
		signal.Ignore(syscall.SIGTERM)
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT)
		fmt.Println("sleeping")
		<-ch
		fmt.Println("got interrupt")
		os.Exit(3)
	case "tty":
		size, ok := ttySize()
		for i := 0; ok && len(args) > 0 && size != args[0] && i < 1000; i++ {
			time.Sleep(10 * time.Millisecond)
			size, ok = ttySize()
		}
		if !ok {
			fmt.Println("notty")
			return
		}
		fmt.Println("tty " + size)
	case "httpd":
		httpd(args)
	}
}

// httpd takes busybox httpd's -p and -h (-f, the foreground, is what it always does); the
// files are read per request, so a re-rendered template shows without a restart.
func httpd(args []string) {
	port, dir := "80", "."
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-p":
			i++
			port = args[i]
		case "-h":
			i++
			dir = args[i]
		}
	}
	if !strings.Contains(port, ":") {
		port = ":" + port
	}
	fmt.Println("serving " + dir + " on " + port)
	srv := &http.Server{Addr: port, Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// ttySize is stdin's terminal size as WxH; the ioctl fails on anything but a terminal.
func ttySize() (string, bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return "", false
	}
	return fmt.Sprintf("%dx%d", ws.Col, ws.Row), true
}
