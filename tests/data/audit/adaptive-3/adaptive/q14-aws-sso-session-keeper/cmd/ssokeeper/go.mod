module ssokeeper

go 1.22
