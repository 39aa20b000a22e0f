package deploy

import "os/exec"

func runZen(args ...string) (string, error) {
	out, err := exec.Command(zenBin, args...).CombinedOutput()
	return string(out), err
}
