module vulngate

go 1.26
