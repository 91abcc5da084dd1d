// three.js ships no type declarations (they are the separate @types/three): the
// constellation uses four of its classes, as `any`.
declare module 'three';
