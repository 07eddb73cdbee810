/**
 * File names inside a development PKI folder, apart from the code that makes them: a
 * command that only reads the folder (`ceres info ldif`: the trusted CAs) need not load
 * the certificate issuing library.
 */
export const DEV_PKI_FILES = {
  caCert: 'ca.pem',
  caKey: 'cakey.pem',
  hostCert: 'hostcert.pem',
  hostKey: 'hostkey.pem',
  userCert: 'usercert.pem',
  userKey: 'userkey.pem',
  userProxy: 'userproxy.pem',
  certificates: 'certificates',
} as const;
