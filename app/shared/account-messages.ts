// Every message the account screens show. The quoted ones are the product
// spec's texts and stay exactly as written (shared spec section 8).
export const MESSAGES = {
  verifyFirst: "Please verify your email before logging in.",
  invalidCredentials: "Invalid email or password.",
  verificationSent: "A verification email has been sent. Please verify your email.",
  emailInUse: "Email address is already in use. Please log in.",
  resetSent: "Password reset email sent!",
  resetNeedsEmail: "Please Enter email address above.",
  resetFailed: "Failed to send password reset email",
  signInFailed: "Failed to log in due to an unexpected error.",
  signUpFailed: "Failed to create account due to an unexpected error.",
  googleFailed: "Failed to log in with Google due to an unexpected error.",
  googleEmailUnverified: "Failed to log in with Google: Google has not verified this email address.",
  googleExpired: "Failed to log in with Google: the sign-in took too long or was started elsewhere. Please try again.",
  googleDenied: "Failed to log in with Google: access was not granted.",
  googleLinkedElsewhere:
    "Failed to log in with Google: this email address belongs to an account linked to another Google account.",
  emailVerified: "Your email is verified. Please sign in.",
  passwordChanged: "Your password has been changed. Please sign in with your new password.",
  passwordChangedKeysRevoked:
    "Your password has been changed. Please sign in with your new password. Your API keys were revoked too: create new ones in Settings.",
  linkInvalid: "This link has expired or was already used.",
  verifyWrongPassword:
    "That is not the password this account was created with. If you did not create it, reset its password from the sign-in page instead.",
  resendFailed: "Failed to send the verification email. Please try again.",
  honeypot: "The form was not submitted properly. Please try again.",
} as const;

export const FIELD_MESSAGES = {
  emailRequired: "Email address is required.",
  emailInvalid: "Enter a valid email address.",
  passwordRequired: "Password is required.",
  passwordTooShort: "Password must be at least 8 characters.",
  passwordTooLong: "Password must be at most 128 characters.",
  nameTooLong: "Name must be at most 100 characters.",
  nameInvalid: "Name contains characters that are not allowed.",
  terms: "You must be at least 18 and accept the Terms of Service.",
} as const;
