package fingerprint

import "net"

// hostNetwork finds the address of the named interface, or of the first interface that is up
// and not a loopback, falling back to the loopback so a laptop without a network still gets
// ports to hand out.
func hostNetwork(name string) (device, ip string, err error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", "", err
	}
	var loopDev, loopIP string
	for _, ifc := range ifaces {
		if name != "" && ifc.Name != name {
			continue
		}
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.To4() == nil {
				continue
			}
			if ifc.Flags&net.FlagLoopback != 0 && name == "" {
				if loopIP == "" {
					loopDev, loopIP = ifc.Name, ipn.IP.String()
				}
				continue
			}
			return ifc.Name, ipn.IP.String(), nil
		}
	}
	if loopIP != "" {
		return loopDev, loopIP, nil
	}
	return "", "", errNoAddress
}
