module codecfetch

go 1.21
